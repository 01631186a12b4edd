// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// expect-error: ax0 kept at 4: its coordinate enters placement
// 4 ranks, exp on an 8x3 tensor split by rows (2x3 shards). The shard size is the literal 2: a grid
// of 2 would leave rows 4..7 to nobody, so the axis must not be reduced (it was: INVALID).
shard.grid @g(shape = 4)
func.func @f(%a: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<8x3xf32>
  %e = tensor.empty() : tensor<8x3xf32>
  %b = linalg.exp ins(%a1 : tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %b1 = shard.shard %b to %s : tensor<8x3xf32>
  return %b1 : tensor<8x3xf32>
}
