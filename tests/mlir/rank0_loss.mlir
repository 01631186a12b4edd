// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// sum of squares of a row-split 4x8 tensor into a rank-0 tensor<f32> loss; MLIR partitions it correctly (local sum, zeroed init on rank 1, all_reduce). MLIR prints the rank-0 sharding as split_axes = [], which its parser rejects: parity once said INVALID.
shard.grid @g(shape = 2)
func.func @loss(%x: tensor<4x8xf32>) -> tensor<f32> {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %rows : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%x1 : tensor<4x8xf32>) outs(%f : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %sq = arith.mulf %in, %in : f32
      %r = arith.addf %sq, %acc : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
