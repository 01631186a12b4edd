shard.grid @g(shape = 2)
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %rep = shard.sharding @g split_axes = [[]] : !shard.sharding
  %sp = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %rep : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.exp ins(%x1 : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %y1 = shard.shard %y to %sp : tensor<8xf32>
  return %y1 : tensor<8xf32>
}
