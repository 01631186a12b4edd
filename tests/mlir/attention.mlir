// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// An attention block with heads split over 2 ranks: scores q k^T per head,
// softmax (exp, row sums, divide), times v, and the output projection
// contracting over heads (partial sums, all-reduced).
#qk_q = affine_map<(h, i, j, d) -> (h, i, d)>
#qk_k = affine_map<(h, i, j, d) -> (h, j, d)>
#qk_s = affine_map<(h, i, j, d) -> (h, i, j)>
#id3 = affine_map<(h, i, j) -> (h, i, j)>
#row3 = affine_map<(h, i, j) -> (h, i)>
#pv_p = affine_map<(h, i, d, j) -> (h, i, j)>
#pv_v = affine_map<(h, i, d, j) -> (h, j, d)>
#pv_o = affine_map<(h, i, d, j) -> (h, i, d)>
#wo_o = affine_map<(i, e, h, d) -> (h, i, d)>
#wo_w = affine_map<(i, e, h, d) -> (h, d, e)>
#wo_y = affine_map<(i, e, h, d) -> (i, e)>
shard.grid @grid(shape = 2)
func.func @attention(%q: tensor<2x4x4xf32>, %k: tensor<2x4x4xf32>, %v: tensor<2x4x4xf32>,
                     %wo: tensor<2x4x8xf32>) -> tensor<4x8xf32> {
  %heads = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %q1 = shard.shard %q to %heads : tensor<2x4x4xf32>
  %k1 = shard.shard %k to %heads : tensor<2x4x4xf32>
  %v1 = shard.shard %v to %heads : tensor<2x4x4xf32>
  %wo1 = shard.shard %wo to %heads : tensor<2x4x8xf32>
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x4x4xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q1, %k1 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%f0 : tensor<2x4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %e1 = tensor.empty() : tensor<2x4x4xf32>
  %x = linalg.exp ins(%s : tensor<2x4x4xf32>) outs(%e1 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %den = linalg.reduce ins(%x : tensor<2x4x4xf32>) outs(%f2 : tensor<2x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %e3 = tensor.empty() : tensor<2x4x4xf32>
  %p = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %den : tensor<2x4x4xf32>, tensor<2x4xf32>) outs(%e3 : tensor<2x4x4xf32>) {
    ^bb0(%a: f32, %d: f32, %o: f32):
      %r = arith.divf %a, %d : f32
      linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %e4 = tensor.empty() : tensor<2x4x4xf32>
  %f4 = linalg.fill ins(%z : f32) outs(%e4 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v1 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%f4 : tensor<2x4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %e5 = tensor.empty() : tensor<4x8xf32>
  %f5 = linalg.fill ins(%z : f32) outs(%e5 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#wo_o, #wo_w, #wo_y],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%o, %wo1 : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%f5 : tensor<4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %y1 = shard.shard %y to %rep : tensor<4x8xf32>
  return %y1 : tensor<4x8xf32>
}
