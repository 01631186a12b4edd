// expect-cmd: verify {dir}/specs/mlir_bug_allgather_via_allreduce.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_allgather_via_allreduce.spec.mlir): same but rank 1 inserts at offset 0
shard.grid @g(shape = 2)
func.func @f(%x: tensor<4x2xf32>) -> tensor<8x2xf32> {
  %e = tensor.empty() : tensor<4x2xf32>
  %y = linalg.exp ins(%x : tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %z = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<8x2xf32>
  %zz = linalg.fill ins(%z : f32) outs(%e8 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %i = shard.process_multi_index on @g axes = [0] : index
  %c0 = arith.constant 0 : index
  %is0 = arith.cmpi eq, %i, %c0 : index
  %buf = scf.if %is0 -> (tensor<8x2xf32>) {
    %a = tensor.insert_slice %y into %zz[0, 0] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<8x2xf32>
    scf.yield %a : tensor<8x2xf32>
  } else {
    %b = tensor.insert_slice %y into %zz[0, 0] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<8x2xf32>
    scf.yield %b : tensor<8x2xf32>
  }
  %r = shard.all_reduce %buf on @g grid_axes = [0] : tensor<8x2xf32> -> tensor<8x2xf32>
  return %r : tensor<8x2xf32>
}
