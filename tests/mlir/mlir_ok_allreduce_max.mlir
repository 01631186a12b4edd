// expect-cmd: verify {dir}/specs/mlir_ok_allreduce_max.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// Hand-partitioned plan against its annotated spec (specs/mlir_ok_allreduce_max.spec.mlir): max twin of mlir_ok_allreduce_min: local max-reduce into the replicated init, all_reduce max (idempotent)
shard.grid @g(shape = 2)
func.func @f(%x: tensor<2x4xf32>, %init: tensor<2xf32>) -> tensor<2xf32> {
  %m = linalg.reduce ins(%x : tensor<2x4xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %a = shard.all_reduce %m on @g grid_axes = [0] reduction = max : tensor<2xf32> -> tensor<2xf32>
  return %a : tensor<2xf32>
}
