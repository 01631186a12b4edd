// Spec of colsum_unused.broken_concat.mlir: column sums of a, replicated on 4 ranks (j unused).
// Alone under verify-mlir, MLIR's shard-partition crashes on it (an unused argument), which parity
// reports as UNKNOWN; as the spec of a hand-partitioned plan it needs no partitioning.
// expect-cmd: verify-mlir
// expect-exit: 3
// expect-error: crashed
shard.grid @g(shape = 4)
func.func @f(%a: tensor<6x5xf32>, %j: tensor<6x5xf32>) -> tensor<5xf32> {
  %rep = shard.sharding @g split_axes = [[]] : !shard.sharding
  %a1 = shard.shard %a to %rep : tensor<6x5xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<5xf32>) -> tensor<5xf32>
  %r = linalg.reduce ins(%a1 : tensor<6x5xf32>) outs(%f : tensor<5xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %y = arith.addf %x, %acc : f32
      linalg.yield %y : f32
    }
  %r1 = shard.shard %r to %rep : tensor<5xf32>
  return %r1 : tensor<5xf32>
}
