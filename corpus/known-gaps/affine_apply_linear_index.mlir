// expect: VERIFIED (matmul contracted over both axes of a 2x2 grid: MLIR zeroes the accumulator unless (ax0*2+ax1)==0, computed with affine.apply, then all_reduce over [0, 1]; correct)
// command: /tmp/h5/parity verify-mlir /tmp/h5/found/affine_apply_linear_index.mlir   -> UNKNOWN 'unsupported affine.apply: no translation to parity ops' (exit 3); same for any contraction split over 2+ grid axes, e.g. batch_matmul on 2x2x2 with K split [1, 2]
shard.grid @g(shape = 2x2)
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s0 = shard.sharding @g split_axes = [[], [0, 1]] : !shard.sharding
  %a1 = shard.shard %a to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @g split_axes = [[0, 1]] : !shard.sharding
  %b1 = shard.shard %b to %s1 : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = linalg.matmul ins(%a1, %b1 : tensor<4x8xf32>, tensor<8x6xf32>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s2 = shard.sharding @g split_axes = [[]] : !shard.sharding
  %c1 = shard.shard %c to %s2 : tensor<4x6xf32>
  return %c1 : tensor<4x6xf32>
}
