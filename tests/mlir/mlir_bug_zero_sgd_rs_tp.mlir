// expect-cmd: verify {dir}/specs/mlir_bug_zero_sgd_rs_tp.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_zero_sgd_rs_tp.spec.mlir): ZeRO reduce_scatter over the tp axis instead of dp
#at = affine_map<(i, j, k) -> (k, i)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
shard.grid @g(shape = 2x2)
func.func @sgd(%x: tensor<2x4xf32>, %w: tensor<4x2xf32>, %dy: tensor<2x2xf32>) -> tensor<4x2xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %gp = linalg.generic {indexing_maps = [#at, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : tensor<2x4xf32>, tensor<2x2xf32>) outs(%f : tensor<4x2xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %gs = shard.reduce_scatter %gp on @g grid_axes = [1] scatter_axis = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
  %i = shard.process_multi_index on @g axes = [0] : index
  %c2 = arith.constant 2 : index
  %o = arith.muli %i, %c2 : index
  %ws = tensor.extract_slice %w[%o, 0] [2, 2] [1, 1] : tensor<4x2xf32> to tensor<2x2xf32>
  %lr = arith.constant dense<0.1> : tensor<2x2xf32>
  %e2 = tensor.empty() : tensor<2x2xf32>
  %u = linalg.mul ins(%gs, %lr : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e2 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %e3 = tensor.empty() : tensor<2x2xf32>
  %wn = linalg.sub ins(%ws, %u : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e3 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %wg = shard.all_gather %wn on @g grid_axes = [0] gather_axis = 0 : tensor<2x2xf32> -> tensor<4x2xf32>
  return %wg : tensor<4x2xf32>
}
