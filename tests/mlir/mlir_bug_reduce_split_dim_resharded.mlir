// expect-cmd: verify-mlir
// expect-exit: 1
// expect-error: MISMATCH
// MLIR bug reproducer (BUGS.md #5), a silently wrong partition: rows split over axis 0, a sum over rows whose result is split over axis 1: MLIR slices columns and reduces locally, never all-reducing over axis 0.
shard.grid @grid(shape = 2x2)
func.func @f(%a: tensor<4x8xf32>, %i: tensor<8xf32>) -> tensor<8xf32> {
  %s0 = shard.sharding @grid split_axes = [[0], []] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %r = linalg.reduce ins(%a1 : tensor<4x8xf32>) outs(%i : tensor<8xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %m = arith.addf %x, %acc : f32
      linalg.yield %m : f32
    }
  %s1 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %r1 = shard.shard %r to %s1 : tensor<8xf32>
  return %r1 : tensor<8xf32>
}
