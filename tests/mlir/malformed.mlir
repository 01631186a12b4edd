// expect-cmd: verify-mlir
// expect-exit: 2
// expect-error: malformed.mlir:10:51: error: use of undeclared SSA value name
// expect-error: error:
// Malformed MLIR: MLIR's own diagnostic with file:line:col, exit 2.
shard.grid @grid(shape = 2)
func.func @bad(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<4x8xf32>
  %b = linalg.exp ins(%a1 : tensor<4x8xf32>) outs(%undefined : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
