// expect-cmd: verify {dir}/specs/mlir_bug_ce_log_before_ar.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_ce_log_before_ar.spec.mlir): log of local sum-exp all_reduced (sum of logs != log of sum)
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#v = affine_map<(i) -> (i)>
shard.grid @tp(shape = 2)
func.func @ce(%x: tensor<2x4xf32>, %t: tensor<2x4xf32>) -> tensor<2xf32> {
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %sel = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x4xf32>) outs(%f2 : tensor<2xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %ea = math.exp %a : f32
      %r = arith.addf %acc, %ea : f32
      linalg.yield %r : f32
  } -> tensor<2xf32>
  %xtl = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %t : tensor<2x4xf32>, tensor<2x4xf32>) outs(%f2 : tensor<2xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2xf32>
  %xt = shard.all_reduce %xtl on @tp grid_axes = [0] : tensor<2xf32> -> tensor<2xf32>
  %e3 = tensor.empty() : tensor<2xf32>
  %ll = linalg.log ins(%sel : tensor<2xf32>) outs(%e3 : tensor<2xf32>) -> tensor<2xf32>
  %lse = shard.all_reduce %ll on @tp grid_axes = [0] : tensor<2xf32> -> tensor<2xf32>
  %e4 = tensor.empty() : tensor<2xf32>
  %l = linalg.sub ins(%lse, %xt : tensor<2xf32>, tensor<2xf32>) outs(%e4 : tensor<2xf32>) -> tensor<2xf32>
  return %l : tensor<2xf32>
}
