// Spec of colsum_grid4.*.mlir: column sums of an 8x3 matrix split by rows over 4 ranks.
// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
shard.grid @g(shape = 4)
func.func @colsum(%a: tensor<8x3xf32>) -> tensor<3xf32> {
  %row = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @g split_axes = [[]] : !shard.sharding
  %a1 = shard.shard %a to %row : tensor<8x3xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.reduce ins(%a1 : tensor<8x3xf32>) outs(%f : tensor<3xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %y = arith.addf %x, %acc : f32
      linalg.yield %y : f32
    }
  %r1 = shard.shard %r to %rep : tensor<3xf32>
  return %r1 : tensor<3xf32>
}
