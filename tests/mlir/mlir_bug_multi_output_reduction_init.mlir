// expect-cmd: verify-mlir
// expect-exit: 1
// expect-error: MISMATCH
// MLIR bug reproducer (BUGS.md #7), a silently wrong partition: a linalg.generic with two reduction outputs, sum(x) and sum(x*x) over a split dim, accumulating onto given inits: shard-partition neutralizes only the FIRST init on ranks != 0 (createDestinationPassingStyleInitOperands asserts one init), so the second init %q0 is all-reduced twice: out1 = 2*q0 + sum x^2
// one-pass layer-norm statistics: sum(x) and sum(x*x) over a split hidden dim, accumulated onto given inits
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
shard.grid @g(shape = 2)
func.func @stats(%x: tensor<4x8xf32>, %s0: tensor<4xf32>, %q0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %col = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %rep = shard.sharding @g split_axes = [[]] : !shard.sharding
  %x1 = shard.shard %x to %col : tensor<4x8xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x1 : tensor<4x8xf32>) outs(%s0, %q0 : tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32, %acc2: f32):
      %s = arith.addf %acc, %a : f32
      %sq = arith.mulf %a, %a : f32
      %q = arith.addf %acc2, %sq : f32
      linalg.yield %s, %q : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %o0 = shard.shard %r#0 to %rep : tensor<4xf32>
  %o1 = shard.shard %r#1 to %rep : tensor<4xf32>
  return %o0, %o1 : tensor<4xf32>, tensor<4xf32>
}
