// expect: VERIFIED (linalg.softmax dimension(1) equals exp(x)/rowsum(exp(x)) in the spec; exact over the reals)
// command: /tmp/h5/parity verify /tmp/h5/found/softmax_vs_decomposed.spec.mlir /tmp/h5/found/softmax_vs_decomposed.mlir   -> UNKNOWN (z3 found a model only under an abstract interpretation of exp/log), exit 3
shard.grid @g(shape = 2)
func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
%e = tensor.empty() : tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}
