// expect-cmd: verify {dir}/specs/allreduce_replicated_clip.spec.mlir
// expect-exit: 1
// expect-error: ax0 kept at 4: a sum over ax0
// A hand-partitioned product rule: every rank computes dy*x and all_reduce sums it over a grid of 4 (4*dy*x) where the spec has dy*x + x*dy, then a clip to 1e-5 saturates at random points. Right on 2 ranks only: reducing the grid to 2 made it VERIFIED. A sum over an axis of a value the same on every rank along it now keeps the axis.
shard.grid @grid(shape = 4)
func.func @f(%x: tensor<3x5xf32>, %dy: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %p = linalg.mul ins(%dy, %x : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %g = shard.all_reduce %p on @grid grid_axes = [0] : tensor<3x5xf32> -> tensor<3x5xf32>
  %lo = arith.constant -1.0e-05 : f32
  %hi = arith.constant 1.0e-05 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
    ^bb0(%v: f32, %o: f32):
      %m = arith.maximumf %v, %lo : f32
      %n = arith.minimumf %m, %hi : f32
      linalg.yield %n : f32
  } -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}
