// expect-cmd: verify {dir}/specs/mlir_ok_ce_neglogp.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// Hand-partitioned plan against its annotated spec (specs/mlir_ok_ce_neglogp.spec.mlir): loss as -log(exp(x.t)/S), equal to log S - x.t
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
  %se = shard.all_reduce %sel on @tp grid_axes = [0] : tensor<2xf32> -> tensor<2xf32>
  %e3 = tensor.empty() : tensor<2xf32>
  %l = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%se, %xt : tensor<2xf32>, tensor<2xf32>) outs(%e3 : tensor<2xf32>) {
    ^bb0(%s: f32, %q: f32, %o: f32):
      %ex = math.exp %q : f32
      %p = arith.divf %ex, %s : f32
      %lp = math.log %p : f32
      %r = arith.negf %lp : f32
      linalg.yield %r : f32
  } -> tensor<2xf32>
  return %l : tensor<2xf32>
}
