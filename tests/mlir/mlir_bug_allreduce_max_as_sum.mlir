// expect-cmd: verify {dir}/specs/mlir_bug_allreduce_max_as_sum.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_allreduce_max_as_sum.spec.mlir): row-max partials combined with all_reduce sum instead of max
shard.grid @g(shape = 2)
func.func @f(%x: tensor<2x4xf32>, %init: tensor<2xf32>) -> tensor<2xf32> {
  %m = linalg.reduce ins(%x : tensor<2x4xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %a = shard.all_reduce %m on @g grid_axes = [0] reduction = sum : tensor<2xf32> -> tensor<2xf32>
  return %a : tensor<2xf32>
}
