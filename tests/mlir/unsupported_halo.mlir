// expect-cmd: verify-mlir
// expect-exit: 3
// expect-error: UNKNOWN
// expect-error: halo sizes are not supported
// Halo shardings are not modeled: UNKNOWN.
shard.grid @grid(shape = 2)
func.func @halo(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @grid split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %b = linalg.exp ins(%a1 : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = shard.shard %b to %s : tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
