// The spec of tests/mlir/clamp_3e38.mlir (a spec, not a test: tests run the *.mlir files one level up).
// spec for clamp_3e38.mlir: a + a, rows split
shard.grid @grid(shape = 2)
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %b = linalg.add ins(%a1, %a1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b1 = shard.shard %b to %s0 : tensor<4x8xf32>
  return %b1 : tensor<4x8xf32>
}
