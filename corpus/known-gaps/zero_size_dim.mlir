// expect: VERIFIED (exp of a 8x0 tensor, rows split on 2 ranks: valid MLIR, both sides empty; MLIR partitions it to tensor<4x0xf32>. parity today: INVALID exit 2 "program spmd: input 'arg0': dim 0 = 0 must be positive": no line/op, and the zero dim is dim 1, not dim 0. Command: parity verify-mlir found/zero_size_dim.mlir)
shard.grid @g(shape = 2)
func.func @f(%x: tensor<8x0xf32>) -> tensor<8x0xf32> {
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s0 : tensor<8x0xf32>
  %e = tensor.empty() : tensor<8x0xf32>
  %y = linalg.exp ins(%x1 : tensor<8x0xf32>) outs(%e : tensor<8x0xf32>) -> tensor<8x0xf32>
  %y1 = shard.shard %y to %s0 : tensor<8x0xf32>
  return %y1 : tensor<8x0xf32>
}
