// expect-cmd: verify {dir}/specs/mlir_bug_grad_accum_double.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_grad_accum_double.spec.mlir): accumulate into g on every rank then all_reduce sum: g counted twice
shard.grid @dp(shape = 2)
func.func @acc(%x: tensor<2x3xf32>, %dy: tensor<2x2xf32>, %g: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>]
      ins(%x, %dy : tensor<2x3xf32>, tensor<2x2xf32>) outs(%g : tensor<3x2xf32>) -> tensor<3x2xf32>
  %a = shard.all_reduce %r on @dp grid_axes = [0] : tensor<3x2xf32> -> tensor<3x2xf32>
  return %a : tensor<3x2xf32>
}
