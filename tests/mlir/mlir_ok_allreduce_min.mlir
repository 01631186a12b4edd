// expect-cmd: verify {dir}/specs/mlir_ok_allreduce_min.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// Row min over a split dim: local linalg.reduce with minimumf into the replicated init, then shard.all_reduce with reduction = min (imported as -max(-x)). Was UNKNOWN: reduction kind min.
shard.grid @g(shape = 2)
func.func @f(%x: tensor<2x4xf32>, %init: tensor<2xf32>) -> tensor<2xf32> {
  %m = linalg.reduce ins(%x : tensor<2x4xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.minimumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %a = shard.all_reduce %m on @g grid_axes = [0] reduction = min : tensor<2xf32> -> tensor<2xf32>
  return %a : tensor<2xf32>
}
