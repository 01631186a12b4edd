// expect-cmd: verify-mlir
// expect-exit: 2
// expect-error: axis 0 has size 0; every grid axis needs at least one process
// A grid of size 0: MLIR's verifier accepts it and shard-partition dies dividing by it; parity said UNKNOWN (the pass crashed) with no line.
shard.grid @g(shape = 0)
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s0 : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.exp ins(%x1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = shard.shard %y to %s0 : tensor<4x8xf32>
  return %y1 : tensor<4x8xf32>
}
