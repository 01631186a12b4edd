// expect-cmd: verify {dir}/specs/tosa_cast_to_int.spec.mlir
// expect-exit: 3
// expect-error: a cast to or from an integer type
// WRONG: the plan rounds exp(a) to integers through tosa.cast f32 -> i32 -> f32; parity once read the casts as no-ops and said VERIFIED.
shard.grid @g(shape = 2)
func.func @f(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
%b = tosa.exp %a : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %i = tosa.cast %b : (tensor<4x3xf32>) -> tensor<4x3xi32>
  %f = tosa.cast %i : (tensor<4x3xi32>) -> tensor<4x3xf32>
  return %f : tensor<4x3xf32>
}
