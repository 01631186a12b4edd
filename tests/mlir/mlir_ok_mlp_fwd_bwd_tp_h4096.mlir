// expect-cmd: verify {dir}/specs/mlir_ok_mlp_fwd_bwd_tp_h4096.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// expect-error: dim N4096 4096 ->
// Hand-partitioned plan against its annotated spec (specs/mlir_ok_mlp_fwd_bwd_tp_h4096.spec.mlir): Megatron MLP fwd+bwd (col-parallel W1, exp, row-parallel W2): y and dx all_reduced, dW1/dW2 local
// At 2048 tokens and hidden = FFN = 4096 on 2 ranks. The plan reuses one 2048x4096 zero buffer for the
// [tokens, hidden] and [FFN/2, hidden] results, so tokens are read as N4096/2 (a tied size symbol).
#mm_a = affine_map<(i, j, k) -> (i, k)>
#mm_b = affine_map<(i, j, k) -> (k, j)>
#mm_bt = affine_map<(i, j, k) -> (j, k)>
#mm_at = affine_map<(i, j, k) -> (k, i)>
#mm_c = affine_map<(i, j, k) -> (i, j)>
shard.grid @tp(shape = 2)
func.func @mlp(%x: tensor<2048x4096xf32>, %w1: tensor<4096x2048xf32>, %w2: tensor<2048x4096xf32>, %dy: tensor<2048x4096xf32>)
    -> (tensor<2048x4096xf32>, tensor<2048x4096xf32>, tensor<4096x2048xf32>, tensor<2048x4096xf32>) {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2048x2048xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %e4 = tensor.empty() : tensor<2048x4096xf32>
  %f4 = linalg.fill ins(%z : f32) outs(%e4 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<2048x4096xf32>, tensor<4096x2048xf32>) outs(%f0 : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %e1 = tensor.empty() : tensor<2048x2048xf32>
  %a = linalg.exp ins(%h : tensor<2048x2048xf32>) outs(%e1 : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %yp = linalg.matmul ins(%a, %w2 : tensor<2048x2048xf32>, tensor<2048x4096xf32>) outs(%f4 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %y = shard.all_reduce %yp on @tp grid_axes = [0] : tensor<2048x4096xf32> -> tensor<2048x4096xf32>
  %da = linalg.generic {indexing_maps = [#mm_a, #mm_bt, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %w2 : tensor<2048x4096xf32>, tensor<2048x4096xf32>) outs(%f0 : tensor<2048x2048xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2048x2048xf32>
  %e2 = tensor.empty() : tensor<2048x2048xf32>
  %dh = linalg.mul ins(%da, %a : tensor<2048x2048xf32>, tensor<2048x2048xf32>) outs(%e2 : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %e3 = tensor.empty() : tensor<4096x2048xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
  %dw1 = linalg.generic {indexing_maps = [#mm_at, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dh : tensor<2048x4096xf32>, tensor<2048x2048xf32>) outs(%f3 : tensor<4096x2048xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<4096x2048xf32>
  %dw1o = tensor.cast %dw1 : tensor<4096x2048xf32> to tensor<4096x2048xf32>
  %dw2 = linalg.generic {indexing_maps = [#mm_at, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %dy : tensor<2048x2048xf32>, tensor<2048x4096xf32>) outs(%f4 : tensor<2048x4096xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2048x4096xf32>
  %dxp = linalg.generic {indexing_maps = [#mm_a, #mm_bt, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dh, %w1 : tensor<2048x2048xf32>, tensor<4096x2048xf32>) outs(%f4 : tensor<2048x4096xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2048x4096xf32>
  %dx = shard.all_reduce %dxp on @tp grid_axes = [0] : tensor<2048x4096xf32> -> tensor<2048x4096xf32>
  return %y, %dx, %dw1o, %dw2 : tensor<2048x4096xf32>, tensor<2048x4096xf32>, tensor<4096x2048xf32>, tensor<2048x4096xf32>
}
