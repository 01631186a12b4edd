shard.grid @g(shape = 2x2)
func.func @f(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
  %s = shard.sharding @g split_axes = [[1, 0]] : !shard.sharding
  %rep = shard.sharding @g split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %rep : tensor<8x2xf32>
  %e = tensor.empty() : tensor<8x2xf32>
  %y = linalg.exp ins(%x1 : tensor<8x2xf32>) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y1 = shard.shard %y to %s : tensor<8x2xf32>
  return %y1 : tensor<8x2xf32>
}
