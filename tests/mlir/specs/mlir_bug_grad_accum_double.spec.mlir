shard.grid @dp(shape = 2)
func.func @acc(%x: tensor<4x3xf32>, %dy: tensor<4x2xf32>, %g: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %b = shard.sharding @dp split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @dp split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %b : tensor<4x3xf32>
  %dy1 = shard.shard %dy to %b : tensor<4x2xf32>
  %g1 = shard.shard %g to %rep : tensor<3x2xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>]
      ins(%x1, %dy1 : tensor<4x3xf32>, tensor<4x2xf32>) outs(%g1 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %r1 = shard.shard %r to %rep : tensor<3x2xf32>
  return %r1 : tensor<3x2xf32>
}
