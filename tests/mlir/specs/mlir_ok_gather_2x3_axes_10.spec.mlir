shard.grid @g(shape = 2x3)
func.func @f(%x: tensor<12x2xf32>) -> tensor<12x2xf32> {
  %s = shard.sharding @g split_axes = [[1, 0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<12x2xf32>
  %e = tensor.empty() : tensor<12x2xf32>
  %y = linalg.exp ins(%x1 : tensor<12x2xf32>) outs(%e : tensor<12x2xf32>) -> tensor<12x2xf32>
  %rep = shard.sharding @g split_axes = [[]] : !shard.sharding
  %y1 = shard.shard %y to %rep : tensor<12x2xf32>
  return %y1 : tensor<12x2xf32>
}
