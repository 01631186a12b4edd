// expect-cmd: verify-mlir
// expect-exit: 1
// expect-error: MISMATCH
// MLIR bug reproducer (BUGS.md #8), a silently wrong partition: row sum and row max over a split dim in one linalg.generic: the reduction kind comes from output 0 only (getCombinerOp matches output 0), so the row MAX is all-reduced with SUM, and its init %m0 is kept on every rank: out1 = max(first half, m0) + max(second half, m0)
// row max and row sum over a split dim in one linalg.generic (softmax statistics), onto given inits
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
shard.grid @g(shape = 2)
func.func @stats(%x: tensor<4x8xf32>, %m0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %col = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %rep = shard.sharding @g split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %col : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x1 : tensor<4x8xf32>) outs(%f, %m0 : tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32, %acc2: f32):
      %s = arith.addf %acc, %a : f32
      %q = arith.maximumf %acc2, %a : f32
      linalg.yield %s, %q : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %o0 = shard.shard %r#0 to %rep : tensor<4xf32>
  %o1 = shard.shard %r#1 to %rep : tensor<4xf32>
  return %o0, %o1 : tensor<4xf32>, tensor<4xf32>
}
