shard.grid @tp(shape = 2)
func.func @sm(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %col = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %x1 = shard.shard %x to %col : tensor<2x8xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x8xf32>
  %ex = linalg.exp ins(%x1 : tensor<2x8xf32>) outs(%e1 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %e2 = tensor.empty() : tensor<2xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %den = linalg.reduce ins(%ex : tensor<2x8xf32>) outs(%f2 : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %e3 = tensor.empty() : tensor<2x8xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %den : tensor<2x8xf32>, tensor<2xf32>) outs(%e3 : tensor<2x8xf32>) {
    ^bb0(%a: f32, %d: f32, %o: f32):
      %r = arith.divf %a, %d : f32
      linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %p1 = shard.shard %p to %col : tensor<2x8xf32>
  return %p1 : tensor<2x8xf32>
}
