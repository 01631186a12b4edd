// The spec of tests/mlir/tosa_cast_to_int.mlir (a spec, not a test: tests run the *.mlir files one level up).
shard.grid @g(shape = 2)
func.func @f(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
%e = tensor.empty() : tensor<4x3xf32>
  %b = linalg.exp ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %b : tensor<4x3xf32>
}
