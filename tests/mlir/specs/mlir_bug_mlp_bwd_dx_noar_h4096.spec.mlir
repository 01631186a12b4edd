#mm_a = affine_map<(i, j, k) -> (i, k)>
#mm_b = affine_map<(i, j, k) -> (k, j)>
#mm_bt = affine_map<(i, j, k) -> (j, k)>
#mm_at = affine_map<(i, j, k) -> (k, i)>
#mm_c = affine_map<(i, j, k) -> (i, j)>
shard.grid @tp(shape = 2)
func.func @mlp(%x: tensor<2048x4096xf32>, %w1: tensor<4096x4096xf32>, %w2: tensor<4096x4096xf32>, %dy: tensor<2048x4096xf32>)
    -> (tensor<2048x4096xf32>, tensor<2048x4096xf32>, tensor<4096x4096xf32>, tensor<4096x4096xf32>) {
  %rep = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %col = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %row = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %rep : tensor<2048x4096xf32>
  %w1s = shard.shard %w1 to %col : tensor<4096x4096xf32>
  %w2s = shard.shard %w2 to %row : tensor<4096x4096xf32>
  %dy1 = shard.shard %dy to %rep : tensor<2048x4096xf32>
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2048x4096xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %h = linalg.matmul ins(%x1, %w1s : tensor<2048x4096xf32>, tensor<4096x4096xf32>) outs(%f0 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %h1 = shard.shard %h to %col : tensor<2048x4096xf32>
  %e1 = tensor.empty() : tensor<2048x4096xf32>
  %a = linalg.exp ins(%h1 : tensor<2048x4096xf32>) outs(%e1 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %a1 = shard.shard %a to %col : tensor<2048x4096xf32>
  %y = linalg.matmul ins(%a1, %w2s : tensor<2048x4096xf32>, tensor<4096x4096xf32>) outs(%f0 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %y1 = shard.shard %y to %rep : tensor<2048x4096xf32>
  // da = dy W2^T
  %da = linalg.generic {indexing_maps = [#mm_a, #mm_bt, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy1, %w2s : tensor<2048x4096xf32>, tensor<4096x4096xf32>) outs(%f0 : tensor<2048x4096xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2048x4096xf32>
  %da1 = shard.shard %da to %col : tensor<2048x4096xf32>
  %e2 = tensor.empty() : tensor<2048x4096xf32>
  %dh = linalg.mul ins(%da1, %a1 : tensor<2048x4096xf32>, tensor<2048x4096xf32>) outs(%e2 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %dh1 = shard.shard %dh to %col : tensor<2048x4096xf32>
  // dW1 = x^T dh
  %e3 = tensor.empty() : tensor<4096x4096xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %dw1 = linalg.generic {indexing_maps = [#mm_at, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x1, %dh1 : tensor<2048x4096xf32>, tensor<2048x4096xf32>) outs(%f3 : tensor<4096x4096xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<4096x4096xf32>
  %dw1s = shard.shard %dw1 to %col : tensor<4096x4096xf32>
  // dW2 = a^T dy
  %dw2 = linalg.generic {indexing_maps = [#mm_at, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a1, %dy1 : tensor<2048x4096xf32>, tensor<2048x4096xf32>) outs(%f3 : tensor<4096x4096xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<4096x4096xf32>
  %dw2s = shard.shard %dw2 to %row : tensor<4096x4096xf32>
  // dx = dh W1^T
  %dx = linalg.generic {indexing_maps = [#mm_a, #mm_bt, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dh1, %w1s : tensor<2048x4096xf32>, tensor<4096x4096xf32>) outs(%f0 : tensor<2048x4096xf32>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2048x4096xf32>
  %dx1 = shard.shard %dx to %rep : tensor<2048x4096xf32>
  return %y1, %dx1, %dw1s, %dw2s : tensor<2048x4096xf32>, tensor<2048x4096xf32>, tensor<4096x4096xf32>, tensor<4096x4096xf32>
}
