// expect: VERIFIED (causal attention scores, heads split, with the causal mask as a replicated non-splat dense arith.constant of 0 / -1e9; the same module with the mask passed as an argument is VERIFIED. parity today: UNKNOWN "MLIR failure: MLIR's shard-partition failed" with no diagnostic, op or line: arith.constant's partition() returns failure for any non-splat dense constant without emitting an error. Usability gap (parity could name the op); MLIR limitation. Command: parity verify-mlir found/attn_dense_mask_constant.mlir)
// expect-cmd: verify-mlir
// expect-exit: 0
#qk_q = affine_map<(h, i, j, d) -> (h, i, d)>
#qk_k = affine_map<(h, i, j, d) -> (h, j, d)>
#qk_s = affine_map<(h, i, j, d) -> (h, i, j)>
#id3 = affine_map<(h, i, j) -> (h, i, j)>
#m3 = affine_map<(h, i, j) -> (i, j)>
#row3 = affine_map<(h, i, j) -> (h, i)>
shard.grid @grid(shape = 2)
func.func @attn(%q: tensor<2x4x4xf32>, %k: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %heads = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %q1 = shard.shard %q to %heads : tensor<2x4x4xf32>
  %k1 = shard.shard %k to %heads : tensor<2x4x4xf32>
  %z = arith.constant 0.0 : f32
  %mask = arith.constant dense<[[0.0, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9, -1.0e9], [0.0, 0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
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
  %x = linalg.generic {indexing_maps = [#id3, #m3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x4xf32>, tensor<4x4xf32>) outs(%e1 : tensor<2x4x4xf32>) {
    ^bb0(%a: f32, %m: f32, %o: f32):
      %c = arith.constant 0.5 : f32
      %sc = arith.mulf %a, %c : f32
      %am = arith.addf %sc, %m : f32
      %ex = math.exp %am : f32
      linalg.yield %ex : f32
  } -> tensor<2x4x4xf32>
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
  %p1 = shard.shard %p to %heads : tensor<2x4x4xf32>
  return %p1 : tensor<2x4x4xf32>
}
