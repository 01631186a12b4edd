// expect-cmd: verify {dir}/mlp_bias.mlir
// expect-exit: 3
// expect-error: unsupported 'arith.cmpi': the left operand of an unsigned comparison ($ax0-1) is -1 at ax0=0
// Hand-partitioned, correct: rank 0 adds the bias, chosen as not (idx - 1 <u 2); -1 is 2^64-1 unsigned.
// parity compared it as signed (a MISMATCH); negative index arithmetic is now refused instead.
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
  %valid = arith.cmpi ult, %prev, %c2 : index
  %true = arith.constant true
  %first = arith.xori %valid, %true : i1
  %init = scf.if %first -> (tensor<4x8xf32>) {
    scf.yield %b : tensor<4x8xf32>
  } else {
    scf.yield %zero : tensor<4x8xf32>
  }
  %y = linalg.matmul ins(%r, %w2 : tensor<4x4xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %out = shard.all_reduce %y on @tp grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}
