// expect-cmd: verify {dir}/specs/softmax_vs_decomposed.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// WRONG: softmax over dim 0 (columns) where the spec normalizes rows.
// Shift invariance must not make different normalizations equal.
shard.grid @g(shape = 2)
func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
%e = tensor.empty() : tensor<4x4xf32>
  %p = linalg.softmax dimension(0) ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}
