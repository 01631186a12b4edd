// expect-cmd: verify-mlir
// expect-exit: 1
// expect-error: MISMATCH
// BUGS.md #11: a row sum of a [[0],[1]] tensor returned replicated: the rows are gathered but the partial sums over axis 1 are never all-reduced.
shard.grid @grid(shape = 2x2)
func.func @f(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %s = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%a1 : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %y = arith.addf %x, %acc : f32
      linalg.yield %y : f32
    }
  %rs = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %r1 = shard.shard %r to %rs : tensor<4xf32>
  return %r1 : tensor<4xf32>
}
