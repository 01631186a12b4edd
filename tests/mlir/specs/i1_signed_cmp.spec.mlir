// The spec of tests/mlir/i1_signed_cmp.mlir (a spec, not a test: tests run the *.mlir files one level up).
// spec for i1_signed_cmp.mlir: C + A@B, contraction split 2 ways
shard.grid @grid(shape = 2)
func.func @mm(%a: tensor<2x4xf32>, %b: tensor<4x2xf32>, %c: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %s0 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<2x4xf32>
  %s1 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<4x2xf32>
  %r = linalg.matmul ins(%a1, %b1 : tensor<2x4xf32>, tensor<4x2xf32>) outs(%c : tensor<2x2xf32>) -> tensor<2x2xf32>
  %s2 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %r1 = shard.shard %r to %s2 : tensor<2x2xf32>
  return %r1 : tensor<2x2xf32>
}
