// expect-cmd: verify-mlir
// expect-exit: 3
// expect-error: MLIR failure: the partitioned function does not fit its shardings
// BUGS.md #12: a result resharded by two chained shard.shard ops ([[0]], then [[],[1]]): MLIR returns a 4x4 shard where [[],[1]] needs 8x4. Was INVALID (exit 2) as if the module were malformed.
shard.grid @grid(shape = 2x2)
func.func @f(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %b = linalg.exp ins(%a : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s1 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<8x8xf32>
  %s2 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
  %b2 = shard.shard %b1 to %s2 : tensor<8x8xf32>
  return %b2 : tensor<8x8xf32>
}
