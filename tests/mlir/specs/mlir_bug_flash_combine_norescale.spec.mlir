#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
shard.grid @sp(shape = 2)
func.func @attn(%s: tensor<2x8xf32>, %v: tensor<8x2xf32>) -> tensor<2x2xf32> {
  %kcol = shard.sharding @sp split_axes = [[], [0]] : !shard.sharding
  %krow = shard.sharding @sp split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @sp split_axes = [[]] : !shard.sharding
  %s1 = shard.shard %s to %kcol : tensor<2x8xf32>
  %v1 = shard.shard %v to %krow : tensor<8x2xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x8xf32>
  %ex = linalg.exp ins(%s1 : tensor<2x8xf32>) outs(%e1 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %e2 = tensor.empty() : tensor<2xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %den = linalg.reduce ins(%ex : tensor<2x8xf32>) outs(%f2 : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %den1 = shard.shard %den to %rep : tensor<2xf32>
  %e3 = tensor.empty() : tensor<2x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %den1 : tensor<2x8xf32>, tensor<2xf32>) outs(%e3 : tensor<2x8xf32>) {
    ^bb0(%a: f32, %d: f32, %o: f32):
      %r = arith.divf %a, %d : f32
      linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %p1 = shard.shard %p to %kcol : tensor<2x8xf32>
  %e4 = tensor.empty() : tensor<2x2xf32>
  %f4 = linalg.fill ins(%z : f32) outs(%e4 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %o = linalg.matmul ins(%p1, %v1 : tensor<2x8xf32>, tensor<8x2xf32>) outs(%f4 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %o1 = shard.shard %o to %rep : tensor<2x2xf32>
  return %o1 : tensor<2x2xf32>
}
