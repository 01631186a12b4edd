// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// expect-error: mesh axis ax0 4 -> 2, dim N3 3 -> 2, dim N8 8 -> 4
// 4 ranks, exp on an 8x3 tensor split by rows (2x3 shards). The shard size, the number 2, is read
// as N8/ax0 (size symbols), so the axis reduces with the dim; kept a number, a grid of 2 would leave
// rows 4..7 to nobody and the axis must not be reduced (it once was: INVALID).
shard.grid @g(shape = 4)
func.func @f(%a: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<8x3xf32>
  %e = tensor.empty() : tensor<8x3xf32>
  %b = linalg.exp ins(%a1 : tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %b1 = shard.shard %b to %s : tensor<8x3xf32>
  return %b1 : tensor<8x3xf32>
}
