// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// A 2x2 grid: A split by rows on axis 0 and by columns (the contracted dim)
// on axis 1, B split by rows on axis 1: partial sums all-reduced over axis 1.
shard.grid @grid(shape = 2x2)
func.func @mm2d(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s0 = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = linalg.matmul ins(%a1, %b1 : tensor<4x8xf32>, tensor<8x6xf32>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s2 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %c1 = shard.shard %c to %s2 : tensor<4x6xf32>
  return %c1 : tensor<4x6xf32>
}
