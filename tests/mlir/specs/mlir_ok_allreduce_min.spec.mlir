shard.grid @g(shape = 2)
func.func @f(%x: tensor<2x8xf32>, %init: tensor<2xf32>) -> tensor<2xf32> {
  %col = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %rep = shard.sharding @g split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %col : tensor<2x8xf32>
  %i1 = shard.shard %init to %rep : tensor<2xf32>
  %m = linalg.reduce ins(%x1 : tensor<2x8xf32>) outs(%i1 : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.minimumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %m1 = shard.shard %m to %rep : tensor<2xf32>
  return %m1 : tensor<2xf32>
}
