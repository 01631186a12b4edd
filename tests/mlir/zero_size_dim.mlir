// expect-cmd: verify-mlir
// expect-exit: 3
// expect-error: a zero-size tensor
// exp of a 8x0 tensor, rows split on 2 ranks: valid MLIR, both sides empty. parity models every dim as at least 1, so it is UNKNOWN with the line (it was INVALID naming the wrong dim and no line).
shard.grid @g(shape = 2)
func.func @f(%x: tensor<8x0xf32>) -> tensor<8x0xf32> {
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s0 : tensor<8x0xf32>
  %e = tensor.empty() : tensor<8x0xf32>
  %y = linalg.exp ins(%x1 : tensor<8x0xf32>) outs(%e : tensor<8x0xf32>) -> tensor<8x0xf32>
  %y1 = shard.shard %y to %s0 : tensor<8x0xf32>
  return %y1 : tensor<8x0xf32>
}
