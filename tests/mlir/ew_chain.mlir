// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// An elementwise chain on a tensor split by rows over 2 ranks: no communication.
shard.grid @grid(shape = 2)
func.func @ew(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<4x8xf32>
  %b1 = shard.shard %b to %s : tensor<4x8xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %c = linalg.add ins(%a1, %b1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %d = linalg.mul ins(%c, %a1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %f = linalg.exp ins(%d : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e3 = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%f : tensor<4x8xf32>) outs(%e3 : tensor<4x8xf32>) {
    ^bb0(%x: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %x, %z : f32
      %t = math.tanh %m : f32
      linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %r = shard.shard %g to %s : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
