// expect-cmd: verify {dir}/mlp_bias.mlir
// expect-exit: 3
// expect-error: outside i8; integer wrap-around is not modeled
// Hand-partitioned, correct: trunci(idx*128) to i8 wraps to -128 on rank 1, the one rank that adds the bias; parity once ignored the width and said MISMATCH.
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
  %i64 = arith.index_cast %idx : index to i64
  %k = arith.constant 128 : i64
  %p = arith.muli %i64, %k : i64
  %t8 = arith.trunci %p : i64 to i8
  %z8 = arith.constant 0 : i8
  %first = arith.cmpi slt, %t8, %z8 : i8
  %init = scf.if %first -> (tensor<4x8xf32>) {
    scf.yield %b : tensor<4x8xf32>
  } else {
    scf.yield %zero : tensor<4x8xf32>
  }
  %y = linalg.matmul ins(%r, %w2 : tensor<4x4xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %out = shard.all_reduce %y on @tp grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}
