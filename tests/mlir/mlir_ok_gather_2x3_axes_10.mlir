// expect-cmd: verify {dir}/specs/mlir_ok_gather_2x3_axes_10.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// Hand-partitioned plan against its annotated spec (specs/mlir_ok_gather_2x3_axes_10.spec.mlir): dim split [[1,0]] on a 2x3 grid, all_gather grid_axes [1,0] restores it
shard.grid @g(shape = 2x3)
func.func @f(%x: tensor<2x2xf32>) -> tensor<12x2xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  %y = linalg.exp ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %g = shard.all_gather %y on @g grid_axes = [1, 0] gather_axis = 0 : tensor<2x2xf32> -> tensor<12x2xf32>
  return %g : tensor<12x2xf32>
}
