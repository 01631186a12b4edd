// expect-cmd: verify {dir}/colsum_grid4.mlir
// expect-exit: 0
// expect-error: VERIFIED
// Hand-partitioned, correct: local column sums of the 2x3 shard, all_reduce sum over 4 ranks. On a
// grid reduced to 2 ranks the fixed shard sizes cover 4 rows, not 8 (it was a false MISMATCH).
shard.grid @g(shape = 4)
func.func @colsum(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%f : tensor<3xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %y = arith.addf %x, %acc : f32
      linalg.yield %y : f32
    }
  %out = shard.all_reduce %r on @g grid_axes = [0] : tensor<3xf32> -> tensor<3xf32>
  return %out : tensor<3xf32>
}
