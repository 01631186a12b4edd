// expect-cmd: verify {dir}/specs/i1_signed_cmp.spec.mlir
// expect-exit: 3
// expect-error: an integer of type i1
// WRONG: MISMATCH (on rank 1 the i1 value is -1 (signed), so `cmpi sle` is true on BOTH ranks and the bias is all-reduced twice; `parity verify i1_signed_cmp.spec.mlir i1_signed_cmp.mlir` says VERIFIED: it reads i1 as the unbounded integer 1).
// parity once said VERIFIED; an i1 integer computed from an index is now UNKNOWN.
module {
  shard.grid @grid(shape = 2)
  func.func @mm(%arg0: tensor<2x2xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %idx = shard.process_multi_index on @grid axes = [0] : index
    %c0 = arith.constant 0 : index
    %t = arith.index_cast %idx : index to i1
    %z = arith.index_cast %c0 : index to i1
    %0 = arith.cmpi sle, %t, %z : i1
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
