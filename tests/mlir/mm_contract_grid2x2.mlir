// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// matmul contracted over both axes of a 2x2 grid, accumulating onto ones:
// MLIR keeps the accumulator on the rank whose linear index
// (`affine.apply`: ax0 * 2 + ax1) is 0, zeroes it elsewhere, and all-reduces
// over [0, 1]. (Once UNKNOWN: affine.apply was not imported.)
shard.grid @g(shape = 2x2)
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s0 = shard.sharding @g split_axes = [[], [0, 1]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %one = arith.constant 1.0 : f32
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = linalg.matmul ins(%a1, %b1 : tensor<4x8xf32>, tensor<8x6xf32>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s2 = shard.sharding @g split_axes = [[]] : !shard.sharding
  %c1 = shard.shard %c to %s2 : tensor<4x6xf32>
  return %c1 : tensor<4x6xf32>
}
