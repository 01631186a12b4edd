// expect-cmd: verify-mlir --print-partitioned
// expect-exit: 0
// expect-error: VERIFIED
// expect-error: = shard.all_to_all
// Resharding split on dim 0 to split on dim 1: all_to_all, between two elementwise ops.
shard.grid @grid(shape = 2)
func.func @reshard(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.exp ins(%a1 : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b1 = shard.shard %b to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %b2 = shard.shard %b1 to %s1 annotate_for_users : tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %c = linalg.mul ins(%b2, %b2 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c1 = shard.shard %c to %s1 : tensor<4x8xf32>
  return %c1 : tensor<4x8xf32>
}
