// expect-cmd: verify-mlir
// expect-exit: 3
// expect-error: UNKNOWN
// expect-error: unsupported 'math.erf'
// An op parity does not model (erf) gives UNKNOWN naming it, never a guess.
shard.grid @grid(shape = 2)
func.func @erf(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = math.erf %x : f32
      linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %r = shard.shard %g to %s : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
