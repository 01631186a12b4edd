// expect-cmd: verify-mlir
// expect-exit: 1
// expect-error: MISMATCH
// MLIR bug reproducer (BUGS.md #6), a silently wrong partition: an argument annotated [[1]] for one user and [[0]] for the result: MLIR gives it one shard and reshards neither use, so the exp result has the wrong shard.
shard.grid @grid(shape = 2x2)
func.func @f(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %s1 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %a2 = shard.shard %a to %s1 annotate_for_users : tensor<4x8xf32>
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %b = linalg.exp ins(%a2 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b1 = shard.shard %b to %s1 : tensor<4x8xf32>
  return %b1, %a1 : tensor<4x8xf32>, tensor<4x8xf32>
}
