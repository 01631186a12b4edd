// expect-cmd: verify {dir}/specs/softmax_decomposed.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// The bug twin of softmax_linalg.mlir: the softmax normalizes over dim 0 where the spec normalizes rows.
shard.grid @g(shape = 2)
func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
%e = tensor.empty() : tensor<4x4xf32>
  %p = linalg.softmax dimension(0) ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}
