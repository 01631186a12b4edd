// expect-cmd: verify {dir}/specs/mlir_bug_slice_overlap.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_slice_overlap.spec.mlir): extract_slice offset idx*3: rank 1 takes [3,7) instead of [4,8)
shard.grid @g(shape = 2)
func.func @f(%x: tensor<8xf32>) -> tensor<4xf32> {
  %i = shard.process_multi_index on @g axes = [0] : index
  %c = arith.constant 3 : index
  %o = arith.muli %i, %c : index
  %s = tensor.extract_slice %x[%o] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.exp ins(%s : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
