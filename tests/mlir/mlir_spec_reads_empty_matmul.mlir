// expect-cmd: verify-mlir
// expect-exit: 2
// expect-error: the spec's results read the contents of a tensor.empty
// The spec's matmul accumulates into a tensor.empty (a forgotten linalg.fill): the spec is undefined, INVALID naming the line. Was MISMATCH, blaming MLIR's faithful partition.
shard.grid @grid(shape = 2)
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %z = arith.constant 0.0 : f32
  %c = linalg.matmul ins(%a1, %b1 : tensor<4x8xf32>, tensor<8x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s2 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %c1 = shard.shard %c to %s2 : tensor<4x6xf32>
  return %c1 : tensor<4x6xf32>
}
