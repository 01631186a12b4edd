// expect-cmd: verify {dir}/specs/mlir_bug_gather_2x2_axes_10.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_gather_2x2_axes_10.spec.mlir): dim split [[0,1]] on 2x2 gathered with grid_axes [1,0]
shard.grid @g(shape = 2x2)
func.func @f(%x: tensor<2x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.exp ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = shard.all_gather %y on @g grid_axes = [1, 0] gather_axis = 0 : tensor<2x4xf32> -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %w = linalg.mul ins(%g, %g : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %w : tensor<8x4xf32>
}
