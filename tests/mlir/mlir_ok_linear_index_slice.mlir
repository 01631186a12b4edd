// expect-cmd: verify {dir}/specs/mlir_ok_linear_index_slice.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// Hand-partitioned plan against its annotated spec (specs/mlir_ok_linear_index_slice.spec.mlir): 2x2 grid, replicated -> split [[0,1]] by extract_slice at process_linear_index*2
shard.grid @g(shape = 2x2)
func.func @f(%x: tensor<8x2xf32>) -> tensor<2x2xf32> {
  %i = shard.process_linear_index on @g : index
  %c2 = arith.constant 2 : index
  %o = arith.muli %i, %c2 : index
  %s = tensor.extract_slice %x[%o, 0] [2, 2] [1, 1] : tensor<8x2xf32> to tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %y = linalg.exp ins(%s : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
