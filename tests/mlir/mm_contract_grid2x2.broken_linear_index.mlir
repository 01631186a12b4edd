// expect-cmd: verify {dir}/mm_contract_grid2x2.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-broken partitioned output of mm_contract_grid2x2.mlir: the linear process index is
// written ax0 * ax1 instead of ax0 * 2 + ax1, so three ranks keep the accumulator of ones
// and the all-reduce counts it three times.
#map = affine_map<()[s0, s1, s2] -> (s0 * s2)>
module {
  shard.grid @g(shape = 2x2)
  func.func @mm(%arg0: tensor<4x2xf32>, %arg1: tensor<2x6xf32>) -> tensor<4x6xf32> {
    %0 = tensor.empty() : tensor<4x6xf32>
    %cst = arith.constant 1.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x6xf32>) -> tensor<4x6xf32>
    %proc_linear_idx:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
    %grid_shape:2 = shard.grid_shape @g axes = [0, 1] : index, index
    %2 = affine.apply #map()[%proc_linear_idx#0, %grid_shape#1, %proc_linear_idx#1]
    %c0 = arith.constant 0 : index
    %3 = arith.cmpi eq, %2, %c0 : index
    %4 = scf.if %3 -> (tensor<4x6xf32>) {
      scf.yield %1 : tensor<4x6xf32>
    } else {
      %6 = tensor.empty() : tensor<4x6xf32>
      %cst_0 = arith.constant 0.000000e+00 : f32
      %7 = linalg.fill ins(%cst_0 : f32) outs(%6 : tensor<4x6xf32>) -> tensor<4x6xf32>
      scf.yield %7 : tensor<4x6xf32>
    }
    %5 = linalg.matmul ins(%arg0, %arg1 : tensor<4x2xf32>, tensor<2x6xf32>) outs(%4 : tensor<4x6xf32>) -> tensor<4x6xf32>
    %all_reduce = shard.all_reduce %5 on @g grid_axes = [0, 1] : tensor<4x6xf32> -> tensor<4x6xf32>
    return %all_reduce : tensor<4x6xf32>
  }
}

