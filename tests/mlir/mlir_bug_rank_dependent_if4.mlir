// expect-cmd: verify {dir}/specs/mlir_bug_rank_dependent_if4.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_rank_dependent_if4.spec.mlir): 4 ranks; ranks >= 2 square their result (scf.if on idx<2); grid not reduced
shard.grid @g(shape = 4)
func.func @f(%x: tensor<16xf32>) -> tensor<4xf32> {
  %i = shard.process_multi_index on @g axes = [0] : index
  %c = arith.constant 4 : index
  %o = arith.muli %i, %c : index
  %s = tensor.extract_slice %x[%o] [4] [1] : tensor<16xf32> to tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.exp ins(%s : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c2 = arith.constant 2 : index
  %lt = arith.cmpi slt, %i, %c2 : index
  %r = scf.if %lt -> (tensor<4xf32>) {
    scf.yield %y : tensor<4xf32>
  } else {
    %e2 = tensor.empty() : tensor<4xf32>
    %y2 = linalg.mul ins(%y, %y : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %y2 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
