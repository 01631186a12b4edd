// expect-cmd: verify {dir}/specs/mlir_ok_layernorm_fused2out.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// Hand-partitioned plan against its annotated spec (specs/mlir_ok_layernorm_fused2out.spec.mlir): same with sum and sum-of-squares in one two-output linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
shard.grid @tp(shape = 2)
func.func @ln(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %sl, %ql = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x4xf32>) outs(%f2, %f2 : tensor<2xf32>, tensor<2xf32>) {
    ^bb0(%in: f32, %a0: f32, %a1: f32):
      %sq = arith.mulf %in, %in : f32
      %r0 = arith.addf %a0, %in : f32
      %r1 = arith.addf %sq, %a1 : f32
      linalg.yield %r0, %r1 : f32, f32
  } -> (tensor<2xf32>, tensor<2xf32>)
  %s = shard.all_reduce %sl on @tp grid_axes = [0] : tensor<2xf32> -> tensor<2xf32>
  %q = shard.all_reduce %ql on @tp grid_axes = [0] : tensor<2xf32> -> tensor<2xf32>
  %e4 = tensor.empty() : tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s, %q : tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>) outs(%e4 : tensor<2x4xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %n = arith.constant 0.125 : f32
      %eps = arith.constant 0.00001 : f32
      %mu = arith.mulf %b, %n : f32
      %ex2 = arith.mulf %c, %n : f32
      %mu2 = arith.mulf %mu, %mu : f32
      %var = arith.subf %ex2, %mu2 : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %dd = arith.subf %a, %mu : f32
      %r = arith.mulf %dd, %rs : f32
      linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
