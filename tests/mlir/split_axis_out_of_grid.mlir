// expect-cmd: verify-mlir
// expect-exit: 2
// expect-error: split_axes names grid axis 1, but @grid has 1 axes
// A sharding that names grid axis 1 of a 1-D grid: MLIR's verifier accepts it and shard-partition crashes indexing the grid's shape; parity said UNKNOWN (the pass crashed, signal 11) with no line.
shard.grid @grid(shape = 2)
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s0 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = linalg.matmul ins(%a1, %b1 : tensor<4x8xf32>, tensor<8x6xf32>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s2 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %c1 = shard.shard %c to %s2 : tensor<4x6xf32>
  return %c1 : tensor<4x6xf32>
}
