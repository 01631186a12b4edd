// expect-cmd: verify-mlir
// expect-exit: 0
// expect-error: VERIFIED
// a rank-0 tensor<f32> operand (a temperature) divides a row-split tensor; MLIR partitions it correctly. MLIR prints the rank-0 sharding as split_axes = [], which its parser rejects: parity once said INVALID.
shard.grid @g(shape = 2)
func.func @scale(%x: tensor<4x8xf32>, %t: tensor<f32>) -> tensor<4x8xf32> {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %rows : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->()>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x1, %t : tensor<4x8xf32>, tensor<f32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%a: f32, %tt: f32, %o: f32):
      %m = arith.divf %a, %tt : f32
      linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %y1 = shard.shard %y to %rows : tensor<4x8xf32>
  return %y1 : tensor<4x8xf32>
}
