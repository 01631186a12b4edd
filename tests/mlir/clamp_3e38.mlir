// expect-cmd: verify {dir}/specs/clamp_3e38.spec.mlir
// expect-exit: 3
// expect-error: UNKNOWN
// WRONG: MISMATCH (tosa.clamp to [-3.0e38, 3.0e38] changes 2*a for a in (1.5e38, 1.7e38], finite in f32 (FLT_MAX 3.4e38) and in the reals; `parity verify clamp_3e38.spec.mlir clamp_3e38.mlir` says VERIFIED: the importer drops clamp bounds of magnitude >= 3e38 as if they were +-FLT_MAX).
// A clamp bound is dropped only at the element type's largest finite value; kept, 3e38 overflows the
// exact coefficients (UNKNOWN, once a false VERIFIED).
shard.grid @grid(shape = 2)
func.func @f(%arg0: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = tosa.add %arg0, %arg0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = tosa.clamp %0 {min_val = -3.0e+38 : f32, max_val = 3.0e+38 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}
