// expect-cmd: verify {dir}/specs/mlir_ok_vocab_softmax.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// Hand-partitioned plan against its annotated spec (specs/mlir_ok_vocab_softmax.spec.mlir): vocab-parallel softmax: local exp + row sum, all_reduce sum, divide
shard.grid @tp(shape = 2)
func.func @sm(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x4xf32>
  %ex = linalg.exp ins(%x : tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %loc = linalg.reduce ins(%ex : tensor<2x4xf32>) outs(%f2 : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %den = shard.all_reduce %loc on @tp grid_axes = [0] : tensor<2xf32> -> tensor<2xf32>
  %e3 = tensor.empty() : tensor<2x4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %den : tensor<2x4xf32>, tensor<2xf32>) outs(%e3 : tensor<2x4xf32>) {
    ^bb0(%a: f32, %d: f32, %o: f32):
      %r = arith.divf %a, %d : f32
      linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %p : tensor<2x4xf32>
}
