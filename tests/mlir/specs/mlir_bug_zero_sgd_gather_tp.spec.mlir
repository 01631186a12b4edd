#at = affine_map<(i, j, k) -> (k, i)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
shard.grid @g(shape = 2x2)
func.func @sgd(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %dy: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %sx = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %sw = shard.sharding @g split_axes = [[], [1]] : !shard.sharding
  %sdy = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding
  %x1 = shard.shard %x to %sx : tensor<4x4xf32>
  %w1 = shard.shard %w to %sw : tensor<4x4xf32>
  %dy1 = shard.shard %dy to %sdy : tensor<4x4xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %gw = linalg.generic {indexing_maps = [#at, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x1, %dy1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %gw1 = shard.shard %gw to %sw : tensor<4x4xf32>
  %lr = arith.constant dense<0.1> : tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %u = linalg.mul ins(%gw1, %lr : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e3 = tensor.empty() : tensor<4x4xf32>
  %wn = linalg.sub ins(%w1, %u : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e3 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %wn1 = shard.shard %wn to %sw : tensor<4x4xf32>
  return %wn1 : tensor<4x4xf32>
}
