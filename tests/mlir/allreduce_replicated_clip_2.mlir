// expect-cmd: verify {dir}/specs/allreduce_replicated_clip_2.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// The same plan on a grid of 2, where summing two copies of dy*x is the spec's dy*x + x*dy.
shard.grid @grid(shape = 2)
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
