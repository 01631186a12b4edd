// expect-cmd: verify-mlir
// expect-exit: 1
// expect-error: MISMATCH
// BUGS.md #10: on a 2x2x2 grid, resharding [[0],[1]] to [[],[2]] emits only an all_gather of dim 0; dim 1 stays split over axis 1 while the result claims axis 2 (shapes match, so MLIR's verifier accepts it).
shard.grid @grid(shape = 2x2x2)
func.func @f(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s0 = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %b = linalg.exp ins(%a1 : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s1 = shard.sharding @grid split_axes = [[], [2]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<8x8xf32>
  return %b1 : tensor<8x8xf32>
}
