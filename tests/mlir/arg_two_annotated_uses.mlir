// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// add(shard(a), a): after propagation the argument has two annotate_for_users uses, both [[0]];
// MLIR splits it (local 2x8). parity once took it for replicated and said INVALID.
shard.grid @grid(shape = 2)
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s0 annotate_for_users : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %b = linalg.add ins(%a1, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
