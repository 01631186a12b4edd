// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// A 2x2 grid, elementwise over a tensor split on both dims ([[0], [1]]) and
// one split on a single dim over both axes ([[0, 1]]).
shard.grid @grid(shape = 2x2)
func.func @ew2d(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>) {
  %s0 = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %c = linalg.exp ins(%a1 : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c1 = shard.shard %c to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @grid split_axes = [[0, 1]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<8x4xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %d = linalg.add ins(%b1, %b1 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %d1 = shard.shard %d to %s1 : tensor<8x4xf32>
  return %c1, %d1 : tensor<4x8xf32>, tensor<8x4xf32>
}
