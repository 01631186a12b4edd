// expect-cmd: verify-mlir
// expect-exit: 3
// expect-error: UNKNOWN
// expect-error: unsupported_floor.mlir:11:8: unsupported 'math.floor' (inside 'linalg.floor')
// The body of a named linalg op has no line of its own: the op the user wrote is named, at its line.
shard.grid @g(shape = 2)
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.floor ins(%a1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c1 = shard.shard %c to %s : tensor<4x8xf32>
  return %c1 : tensor<4x8xf32>
}
