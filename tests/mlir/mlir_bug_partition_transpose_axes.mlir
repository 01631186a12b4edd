// expect-cmd: verify-mlir
// expect-exit: 3
// expect-error: MLIR failure
// expect-error: shard-partition failed
// MLIR bug reproducer (BUGS.md #2): resharding [[0], [1]] -> [[1], [0]] on a
// 2x2 grid yields operands of the wrong shape (invalid IR).
shard.grid @grid(shape = 2x2)
func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s0 = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.add ins(%a1, %b1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %d = linalg.exp ins(%c : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = shard.sharding @grid split_axes = [[1], [0]] : !shard.sharding
  %c1 = shard.shard %d to %s2 : tensor<4x8xf32>
  %s3 = shard.sharding @grid split_axes = [[0,1]] : !shard.sharding
  %c2 = shard.shard %c1 to %s3 annotate_for_users : tensor<4x8xf32>
  return %c2 : tensor<4x8xf32>
}
