// expect-cmd: verify {dir}/specs/i64_wrap.spec.mlir
// expect-exit: 3
// expect-error: overflows 64 bits
// i64 muli wraps (idx*2^62 is 0, 2^62, -2^63, -2^62): right in MLIR, but wrap-around is not modeled.
// Once INVALID with no file or line; now UNKNOWN at the op.
module {
  shard.grid @grid(shape = 4)
  func.func @mm(%arg0: tensor<2x2xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %idx = shard.process_multi_index on @grid axes = [0] : index
    %i = arith.index_cast %idx : index to i64
    %big = arith.constant 4611686018427387904 : i64
    %z = arith.constant 0 : i64
    %t = arith.muli %i, %big : i64
    %0 = arith.cmpi eq, %t, %z : i64
    %1 = scf.if %0 -> (tensor<2x2xf32>) {
      scf.yield %arg2 : tensor<2x2xf32>
    } else {
      %3 = tensor.empty() : tensor<2x2xf32>
      %cst = arith.constant 0.000000e+00 : f32
      %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x2xf32>) -> tensor<2x2xf32>
      scf.yield %4 : tensor<2x2xf32>
    }
    %2 = linalg.matmul ins(%arg0, %arg1 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>
    %all_reduce = shard.all_reduce %2 on @grid grid_axes = [0] : tensor<2x2xf32> -> tensor<2x2xf32>
    return %all_reduce : tensor<2x2xf32>
  }
}
