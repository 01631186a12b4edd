// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// tosa elementwise ops on a tensor split by rows, then gathered.
shard.grid @grid(shape = 2)
func.func @tosa_ew(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<4x8xf32>
  %b1 = shard.shard %b to %s : tensor<4x8xf32>
  %c = tosa.add %a1, %b1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = tosa.exp %c : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tosa.sigmoid %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %f = tosa.maximum %e, %a1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %f1 = shard.shard %f to %s : tensor<4x8xf32>
  %g = shard.shard %f1 to %rep annotate_for_users : tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}
