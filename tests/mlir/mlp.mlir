// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// A Megatron MLP over 2 ranks: W1 split by columns, relu, W2 split by rows,
// the partial sums all-reduced.
shard.grid @grid(shape = 2)
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %row = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %rep : tensor<4x8xf32>
  %w11 = shard.shard %w1 to %col : tensor<8x16xf32>
  %w21 = shard.shard %w2 to %row : tensor<16x8xf32>
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x16xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x1, %w11 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f0 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h1 = shard.shard %h to %col : tensor<4x16xf32>
  %e1 = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h1 : tensor<4x16xf32>) outs(%e1 : tensor<4x16xf32>) {
    ^bb0(%v: f32, %o: f32):
      %m = arith.maximumf %v, %z : f32
      linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %r1 = shard.shard %r to %col : tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%r1, %w21 : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = shard.shard %y to %rep : tensor<4x8xf32>
  return %y1 : tensor<4x8xf32>
}
