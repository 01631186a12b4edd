shard.grid @g(shape = 2)
func.func @loss(%x: tensor<8xf32>) -> tensor<f32> {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %rows : tensor<8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%x1 : tensor<8xf32>) outs(%f : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %c = arith.constant 0.125 : f32
      %sq = arith.mulf %in, %in : f32
      %t = arith.mulf %sq, %c : f32
      %r = arith.addf %t, %acc : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
