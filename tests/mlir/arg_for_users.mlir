// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// The argument's one use is a shard.shard annotated for its users: the partitioner gives the
// argument that sharding (a 4x4 shard), so its placement is split too (it was taken as replicated: INVALID).
shard.grid @g(shape = 2)
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a1 = shard.shard %a to %s annotate_for_users : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %b = linalg.exp ins(%a1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b1 = shard.shard %b to %s : tensor<4x8xf32>
  return %b1 : tensor<4x8xf32>
}
