// expect-cmd: verify {dir}/specs/mlir_ok_grad_accum_avg.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// Hand-partitioned plan against its annotated spec (specs/mlir_ok_grad_accum_avg.spec.mlir): gradient accumulation g + x^T dy, DP: (2*partial + g) all_reduced with average
shard.grid @dp(shape = 2)
func.func @acc(%x: tensor<2x3xf32>, %dy: tensor<2x2xf32>, %g: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>]
      ins(%x, %dy : tensor<2x3xf32>, tensor<2x2xf32>) outs(%f : tensor<3x2xf32>) -> tensor<3x2xf32>
  %two = arith.constant dense<2.0> : tensor<3x2xf32>
  %e2 = tensor.empty() : tensor<3x2xf32>
  %r2 = linalg.mul ins(%r, %two : tensor<3x2xf32>, tensor<3x2xf32>) outs(%e2 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %e3 = tensor.empty() : tensor<3x2xf32>
  %r3 = linalg.add ins(%r2, %g : tensor<3x2xf32>, tensor<3x2xf32>) outs(%e3 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %a = shard.all_reduce %r3 on @dp grid_axes = [0] reduction = average : tensor<3x2xf32> -> tensor<3x2xf32>
  return %a : tensor<3x2xf32>
}
