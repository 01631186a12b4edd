// Spec of the hand-partitioned MLP-with-bias plans (mlp_bias.*.mlir): Megatron MLP, bias after the row-parallel matmul.
// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
shard.grid @tp(shape = 2)
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %rep = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %col = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %row = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %rep : tensor<4x8xf32>
  %w1s = shard.shard %w1 to %col : tensor<8x8xf32>
  %w2s = shard.shard %w2 to %row : tensor<8x8xf32>
  %b1 = shard.shard %b to %rep : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = linalg.matmul ins(%x1, %w1s : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = shard.shard %h to %col : tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.exp ins(%h1 : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r1 = shard.shard %r to %col : tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%r1, %w2s : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e3 = tensor.empty() : tensor<4x8xf32>
  %yb = linalg.add ins(%y, %b1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e3 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = shard.shard %yb to %rep : tensor<4x8xf32>
  return %y1 : tensor<4x8xf32>
}
