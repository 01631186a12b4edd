// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// expect-error: dim N14336 14336 ->
// The Megatron MLP of mlp.mlir at Llama-3 8B sizes (1024 tokens, hidden 4096, FFN 14336) over 2
// ranks. MLIR writes every size as a number; as size symbols (N4096, N14336/ax0 for a shard) they
// reduce like a protobuf case, and the check takes milliseconds instead of running out of memory.
shard.grid @grid(shape = 2)
func.func @mlp(%x: tensor<1024x4096xf32>, %w1: tensor<4096x14336xf32>, %w2: tensor<14336x4096xf32>) -> tensor<1024x4096xf32> {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %row = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %rep : tensor<1024x4096xf32>
  %w11 = shard.shard %w1 to %col : tensor<4096x14336xf32>
  %w21 = shard.shard %w2 to %row : tensor<14336x4096xf32>
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1024x14336xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<1024x14336xf32>) -> tensor<1024x14336xf32>
  %h = linalg.matmul ins(%x1, %w11 : tensor<1024x4096xf32>, tensor<4096x14336xf32>) outs(%f0 : tensor<1024x14336xf32>) -> tensor<1024x14336xf32>
  %h1 = shard.shard %h to %col : tensor<1024x14336xf32>
  %e1 = tensor.empty() : tensor<1024x14336xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h1 : tensor<1024x14336xf32>) outs(%e1 : tensor<1024x14336xf32>) {
    ^bb0(%v: f32, %o: f32):
      %m = arith.maximumf %v, %z : f32
      linalg.yield %m : f32
  } -> tensor<1024x14336xf32>
  %r1 = shard.shard %r to %col : tensor<1024x14336xf32>
  %e2 = tensor.empty() : tensor<1024x4096xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<1024x4096xf32>) -> tensor<1024x4096xf32>
  %y = linalg.matmul ins(%r1, %w21 : tensor<1024x14336xf32>, tensor<14336x4096xf32>) outs(%f2 : tensor<1024x4096xf32>) -> tensor<1024x4096xf32>
  %y1 = shard.shard %y to %rep : tensor<1024x4096xf32>
  return %y1 : tensor<1024x4096xf32>
}
