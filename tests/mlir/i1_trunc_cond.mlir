// expect-cmd: verify {dir}/specs/i1_trunc_cond.spec.mlir
// expect-exit: 3
// expect-error: an integer of type i1
// WRONG: MISMATCH (index_cast index->i1 truncates: on ranks 0 AND 2 the cmpi is true, so the bias %arg2 is added twice; `parity verify i1_trunc_cond.spec.mlir i1_trunc_cond.mlir` says VERIFIED: i1 values skip the width check and are modeled as unbounded ints).
// parity once said VERIFIED; an i1 integer computed from an index is now UNKNOWN.
module {
  shard.grid @grid(shape = 4)
  func.func @mm(%arg0: tensor<2x2xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %idx = shard.process_multi_index on @grid axes = [0] : index
    %c0 = arith.constant 0 : index
    %t = arith.index_cast %idx : index to i1
    %z = arith.index_cast %c0 : index to i1
    %0 = arith.cmpi eq, %t, %z : i1
    %1 = scf.if %0 -> (tensor<2x2xf32>) {
      scf.yield %arg2 : tensor<2x2xf32>
    } else {
      %3 = tensor.empty() : tensor<2x2xf32>
      %cst = arith.constant 0.000000e+00 : f32
      %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x2xf32>) -> tensor<2x2xf32>
      scf.yield %4 : tensor<2x2xf32>
    }
    %2 = linalg.matmul ins(%arg0, %arg1 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>
    %all_reduce = shard.all_reduce %2 on @grid grid_axes = [0] : tensor<2x2xf32> -> tensor<2x2xf32>
    return %all_reduce : tensor<2x2xf32>
  }
}
