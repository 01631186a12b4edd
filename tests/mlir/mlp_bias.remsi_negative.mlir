// expect-cmd: verify {dir}/mlp_bias.mlir
// expect-exit: 3
// expect-error: unsupported 'arith.remsi': the dividend ($ax0-1) is -1 at ax0=0
// Hand-partitioned, WRONG: the bias is meant for the one rank where (idx - 1) rem 2 == 1, but
// arith.remsi keeps the dividend's sign (remsi(-1, 2) = -1 on rank 0), so no rank adds it. parity's
// index remainder is never negative, so it must not model this (it once said VERIFIED).
shard.grid @tp(shape = 2)
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x4xf32>, %w2: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x4xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4x4xf32>
  %r = linalg.exp ins(%h : tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %zero = linalg.fill ins(%z : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %idx = shard.process_multi_index on @tp axes = [0] : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %prev = arith.subi %idx, %c1 : index
  %m = arith.remsi %prev, %c2 : index
  %first = arith.cmpi eq, %m, %c1 : index
  %init = scf.if %first -> (tensor<4x8xf32>) {
    scf.yield %b : tensor<4x8xf32>
  } else {
    scf.yield %zero : tensor<4x8xf32>
  }
  %y = linalg.matmul ins(%r, %w2 : tensor<4x4xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %out = shard.all_reduce %y on @tp grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}
