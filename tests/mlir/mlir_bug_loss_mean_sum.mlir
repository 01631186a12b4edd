// expect-cmd: verify {dir}/specs/mlir_bug_loss_mean_sum.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_loss_mean_sum.spec.mlir): local mean then all_reduce sum: 2x loss
shard.grid @g(shape = 2)
func.func @loss(%x: tensor<4xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%x : tensor<4xf32>) outs(%f : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %c = arith.constant 0.25 : f32
      %sq = arith.mulf %in, %in : f32
      %t = arith.mulf %sq, %c : f32
      %r = arith.addf %t, %acc : f32
      linalg.yield %r : f32
    }
  %a = shard.all_reduce %s on @g grid_axes = [0] reduction = sum : tensor<f32> -> tensor<f32>
  return %a : tensor<f32>
}
