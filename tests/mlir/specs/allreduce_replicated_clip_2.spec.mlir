// expect: VERIFIED  -- 2-rank twin: the all_reduce of the replicated term gives 2*dy*x = spec (right on 2 ranks only)
// Spec: gradient of y = x*x by the product rule (dx = dy*x + x*dy), then clip_grad_value_(1e-5).
shard.grid @grid(shape = 2)
func.func @f(%x: tensor<3x5xf32>, %dy: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %e = tensor.empty() : tensor<3x5xf32>
  %p = linalg.mul ins(%dy, %x : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %q = linalg.mul ins(%x, %dy : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %g = linalg.add ins(%p, %q : tensor<3x5xf32>, tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
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
