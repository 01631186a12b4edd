// The spec of tests/mlir/i64_wrap.mlir (a spec, not a test: tests run the *.mlir files one level up).
// spec for i64_wrap_invalid.mlir: C + A@B, contraction split 4 ways
shard.grid @grid(shape = 4)
func.func @mm(%a: tensor<2x8xf32>, %b: tensor<8x2xf32>, %c: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %s0 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<2x8xf32>
  %s1 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<8x2xf32>
  %r = linalg.matmul ins(%a1, %b1 : tensor<2x8xf32>, tensor<8x2xf32>) outs(%c : tensor<2x2xf32>) -> tensor<2x2xf32>
  %s2 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %r1 = shard.shard %r to %s2 : tensor<2x2xf32>
  return %r1 : tensor<2x2xf32>
}
