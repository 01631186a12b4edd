// expect-cmd: verify-mlir
// expect-exit: 3
// expect-error: MLIR failure
// expect-error: does not dominate
// MLIR bug reproducer (BUGS.md #1): sharding-propagation emits a shard.shard
// before the shard.sharding it uses (invalid IR). parity reports it as an
// MLIR failure (UNKNOWN), never a crash.
shard.grid @grid(shape = 2)
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a2 = shard.shard %a1 to %s1 annotate_for_users : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.exp ins(%a2 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%c : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%x: f32, %acc: f32) { %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32 }
  %s2 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %r1 = shard.shard %r to %s2 : tensor<4xf32>
  %s3 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %c1 = shard.shard %c to %s3 : tensor<4x8xf32>
  return %c1 : tensor<4x8xf32>
}
