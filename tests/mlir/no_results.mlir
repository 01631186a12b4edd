// expect-cmd: verify-mlir
// expect-exit: 2
// expect-error: the spec has no outputs
// A function with no results is a malformed spec: INVALID, as `verify` says (verify-mlir called it an MLIR failure, UNKNOWN).
shard.grid @grid(shape = 2)
func.func @f(%a: tensor<4xf32>) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %b = shard.shard %a to %s : tensor<4xf32>
  return
}
