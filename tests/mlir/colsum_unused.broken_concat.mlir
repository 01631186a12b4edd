// expect-cmd: verify {dir}/colsum_unused.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-broken: rank i sums rows [3i, 3i+3) of concat(a, j) and the sums are all-reduced, so the
// result is colsum(a) + colsum(j); it would be right on 2 ranks only, and the mesh reduction to 2
// ranks once said VERIFIED.
shard.grid @g(shape = 4)
func.func @f(%a: tensor<6x5xf32>, %j: tensor<6x5xf32>) -> tensor<5xf32> {
  %cat = tensor.concat dim(0) %a, %j : (tensor<6x5xf32>, tensor<6x5xf32>) -> tensor<12x5xf32>
  %idx = shard.process_multi_index on @g axes = [0] : index
  %c3 = arith.constant 3 : index
  %off = arith.muli %idx, %c3 : index
  %blk = tensor.extract_slice %cat[%off, 0] [3, 5] [1, 1] : tensor<12x5xf32> to tensor<3x5xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<5xf32>) -> tensor<5xf32>
  %r = linalg.reduce ins(%blk : tensor<3x5xf32>) outs(%f : tensor<5xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %y = arith.addf %x, %acc : f32
      linalg.yield %y : f32
    }
  %out = shard.all_reduce %r on @g grid_axes = [0] : tensor<5xf32> -> tensor<5xf32>
  return %out : tensor<5xf32>
}
