// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// A row sum over the split dim (partial sums, all-reduced) and a row max over
// the unsplit one; linalg.reduce and a reduction linalg.generic.
shard.grid @grid(shape = 2)
func.func @red(%a: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%a1 : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %y = arith.addf %x, %acc : f32
      linalg.yield %y : f32
    }
  %ninf = arith.constant -100.0 : f32
  %e2 = tensor.empty() : tensor<8xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%a1 : tensor<4x8xf32>) outs(%f2 : tensor<8xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %y = arith.maximumf %acc, %x : f32
      linalg.yield %y : f32
  } -> tensor<8xf32>
  %rs = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %r1 = shard.shard %r to %rs : tensor<4xf32>
  %ms = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %m1 = shard.shard %m to %ms : tensor<8xf32>
  return %r1, %m1 : tensor<4xf32>, tensor<8xf32>
}
