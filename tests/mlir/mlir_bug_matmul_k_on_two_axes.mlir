// expect-cmd: verify-mlir
// expect-exit: 1
// expect-error: MISMATCH
// MLIR bug reproducer (BUGS.md #4), a silently wrong partition: A's contracted dim split over grid axis 0, B's over axis 1: MLIR slices both but contracts mismatched K chunks and emits no all_reduce.
shard.grid @grid(shape = 2x2)
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s0 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @grid split_axes = [[1], []] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<8x4xf32>
  %r = linalg.matmul ins(%a1, %b1 : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s2 = shard.sharding @grid split_axes = [[1], [0]] : !shard.sharding
  %r1 = shard.shard %r to %s2 : tensor<4x4xf32>
  return %r1 : tensor<4x4xf32>
}
