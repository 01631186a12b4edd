#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
shard.grid @tp(shape = 2)
func.func @ln(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %col = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %x1 = shard.shard %x to %col : tensor<2x8xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.reduce ins(%x1 : tensor<2x8xf32>) outs(%f2 : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %e3 = tensor.empty() : tensor<2x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x1, %s : tensor<2x8xf32>, tensor<2xf32>) outs(%e3 : tensor<2x8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.constant 0.125 : f32
      %mu = arith.mulf %b, %n : f32
      %r = arith.subf %a, %mu : f32
      linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %d1 = shard.shard %d to %col : tensor<2x8xf32>
  %v = linalg.reduce ins(%d1 : tensor<2x8xf32>) outs(%f2 : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %sq = arith.mulf %in, %in : f32
      %r = arith.addf %sq, %acc : f32
      linalg.yield %r : f32
    }
  %e4 = tensor.empty() : tensor<2x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d1, %v : tensor<2x8xf32>, tensor<2xf32>) outs(%e4 : tensor<2x8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.constant 0.125 : f32
      %eps = arith.constant 0.00001 : f32
      %var = arith.mulf %b, %n : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %r = arith.mulf %a, %rs : f32
      linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %y1 = shard.shard %y to %col : tensor<2x8xf32>
  return %y1 : tensor<2x8xf32>
}
