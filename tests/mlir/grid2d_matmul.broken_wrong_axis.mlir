// expect-cmd: verify {dir}/grid2d_matmul.mlir
// expect-exit: 1
// expect-error: MISMATCH
// expect-error: first divergence
// Hand-broken partitioned output of grid2d_matmul.mlir: the partial sums are
// all-reduced over grid axis 0 (the row split) instead of axis 1.
module {
  shard.grid @grid(shape = 2x2)
  func.func @mm2d(%arg0: tensor<2x4xf32>, %arg1: tensor<4x6xf32>) -> tensor<2x6xf32> {
    %0 = tensor.empty() : tensor<2x6xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x6xf32>) -> tensor<2x6xf32>
    %proc_linear_idx = shard.process_multi_index on @grid axes = [1] : index
    %grid_shape = shard.grid_shape @grid axes = [1] : index
    %c0 = arith.constant 0 : index
    %2 = arith.cmpi eq, %proc_linear_idx, %c0 : index
    %3 = scf.if %2 -> (tensor<2x6xf32>) {
      scf.yield %1 : tensor<2x6xf32>
    } else {
      %5 = tensor.empty() : tensor<2x6xf32>
      %cst_0 = arith.constant 0.000000e+00 : f32
      %6 = linalg.fill ins(%cst_0 : f32) outs(%5 : tensor<2x6xf32>) -> tensor<2x6xf32>
      scf.yield %6 : tensor<2x6xf32>
    }
    %4 = linalg.matmul ins(%arg0, %arg1 : tensor<2x4xf32>, tensor<4x6xf32>) outs(%3 : tensor<2x6xf32>) -> tensor<2x6xf32>
    %all_reduce = shard.all_reduce %4 on @grid grid_axes = [0] : tensor<2x6xf32> -> tensor<2x6xf32>
    return %all_reduce : tensor<2x6xf32>
  }
}

