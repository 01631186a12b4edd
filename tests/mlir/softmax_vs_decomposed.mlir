// expect-cmd: verify {dir}/specs/softmax_vs_decomposed.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// linalg.softmax (imported with the row max subtracted: exp(a - m) / sum exp(a_j - m)) against
// the spec's exp(a) / rowsum(exp(a)): equal over the reals by shift invariance. Once UNKNOWN.
shard.grid @g(shape = 2)
func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
%e = tensor.empty() : tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}
