shard.grid @g(shape = 2x2)
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %rep = shard.sharding @g split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %y = linalg.exp ins(%x1 : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y1 = shard.shard %y to %s : tensor<8x4xf32>
  %y2 = shard.shard %y1 to %rep annotate_for_users : tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %w = linalg.mul ins(%y2, %y2 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %w1 = shard.shard %w to %rep : tensor<8x4xf32>
  return %w1 : tensor<8x4xf32>
}
