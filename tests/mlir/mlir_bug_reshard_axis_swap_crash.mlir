// expect-cmd: verify-mlir
// expect-exit: 3
// expect-error: shard-partition crashed (signal 11
// MLIR bug reproducer (BUGS.md #9): resharding a 2x2-grid tensor from [[0]] to [[1]] (one dim, the other grid axis) crashes shard-partition (mlir-opt-22 too); parity reports the crash as UNKNOWN instead of dying with it.
shard.grid @g(shape = 2x2)
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %s1 = shard.sharding @g split_axes = [[1]] : !shard.sharding
  %x1 = shard.shard %x to %s0 : tensor<4x4xf32>
  %x2 = shard.shard %x1 to %s1 : tensor<4x4xf32>
  return %x2 : tensor<4x4xf32>
}
