// expect-cmd: verify {dir}/mm_contract.mlir
// expect-exit: 1
// expect-error: MISMATCH
// expect-error: first divergence
// Hand-broken: ranks other than 0 accumulate into a tensor.empty (undefined contents) instead of zeros.
module {
  shard.grid @grid(shape = 2)
  func.func @mm(%arg0: tensor<4x4xf32>, %arg1: tensor<4x6xf32>) -> tensor<4x6xf32> {
    %0 = tensor.empty() : tensor<4x6xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x6xf32>) -> tensor<4x6xf32>
    %proc_linear_idx = shard.process_multi_index on @grid axes = [0] : index
    %grid_shape = shard.grid_shape @grid axes = [0] : index
    %c0 = arith.constant 0 : index
    %2 = arith.cmpi eq, %proc_linear_idx, %c0 : index
    %3 = scf.if %2 -> (tensor<4x6xf32>) {
      scf.yield %1 : tensor<4x6xf32>
    } else {
      %5 = tensor.empty() : tensor<4x6xf32>
      %cst_0 = arith.constant 0.000000e+00 : f32
      scf.yield %5 : tensor<4x6xf32>
    }
    %4 = linalg.matmul ins(%arg0, %arg1 : tensor<4x4xf32>, tensor<4x6xf32>) outs(%3 : tensor<4x6xf32>) -> tensor<4x6xf32>
    %all_reduce = shard.all_reduce %4 on @grid grid_axes = [0] : tensor<4x6xf32> -> tensor<4x6xf32>
    return %all_reduce : tensor<4x6xf32>
  }
}

