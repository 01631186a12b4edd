#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
shard.grid @tp(shape = 2)
func.func @ce(%x: tensor<2x8xf32>, %t: tensor<2x8xf32>) -> tensor<2xf32> {
  %col = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %rep = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %col : tensor<2x8xf32>
  %t1 = shard.shard %t to %col : tensor<2x8xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %se = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x1 : tensor<2x8xf32>) outs(%f2 : tensor<2xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %ea = math.exp %a : f32
      %r = arith.addf %acc, %ea : f32
      linalg.yield %r : f32
  } -> tensor<2xf32>
  %xt = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x1, %t1 : tensor<2x8xf32>, tensor<2x8xf32>) outs(%f2 : tensor<2xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2xf32>
  %e3 = tensor.empty() : tensor<2xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%se, %xt : tensor<2xf32>, tensor<2xf32>) outs(%e3 : tensor<2xf32>) {
    ^bb0(%s: f32, %v: f32, %o: f32):
      %ls = math.log %s : f32
      %r = arith.subf %ls, %v : f32
      linalg.yield %r : f32
  } -> tensor<2xf32>
  %l1 = shard.shard %l to %rep : tensor<2xf32>
  return %l1 : tensor<2xf32>
}
