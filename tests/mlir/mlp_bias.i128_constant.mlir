// expect-cmd: verify {dir}/mlp_bias.mlir
// expect-exit: 3
// expect-error: an integer constant past 64 bits
// Hand-partitioned, WRONG: the i128 constant 2^64 never equals the rank index, so no rank adds the bias; parity once read it with getSExtValue (low 64 bits: 0), so rank 0 added it, and said VERIFIED.
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
  %i = arith.index_cast %idx : index to i128
  %big = arith.constant 18446744073709551616 : i128
  %first = arith.cmpi eq, %i, %big : i128
  %init = scf.if %first -> (tensor<4x8xf32>) {
    scf.yield %b : tensor<4x8xf32>
  } else {
    scf.yield %zero : tensor<4x8xf32>
  }
  %y = linalg.matmul ins(%r, %w2 : tensor<4x4xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %out = shard.all_reduce %y on @tp grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}
