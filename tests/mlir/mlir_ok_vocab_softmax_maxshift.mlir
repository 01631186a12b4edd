// expect-cmd: verify {dir}/specs/mlir_ok_vocab_softmax_maxshift.spec.mlir
// expect-exit: 0
// expect-error: VERIFIED
// Hand-partitioned plan against its annotated spec (specs/mlir_ok_vocab_softmax_maxshift.spec.mlir): Megatron vocab-parallel softmax in tosa: local reduce_max, all_reduce max, subtract, exp, all_reduce sum; equal to exp/sum exp by shift invariance
shard.grid @tp(shape = 2)
func.func @sm(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %ml = tosa.reduce_max %x {axis = 1 : i32} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %m = shard.all_reduce %ml on @tp grid_axes = [0] reduction = max : tensor<2x1xf32> -> tensor<2x1xf32>
  %xs = tosa.sub %x, %m : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %ex = tosa.exp %xs : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %sl = tosa.reduce_sum %ex {axis = 1 : i32} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %s = shard.all_reduce %sl on @tp grid_axes = [0] : tensor<2x1xf32> -> tensor<2x1xf32>
  %rs = tosa.reciprocal %s : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %sh = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %p = tosa.mul %ex, %rs, %sh : (tensor<2x4xf32>, tensor<2x1xf32>, tensor<1xi8>) -> tensor<2x4xf32>
  return %p : tensor<2x4xf32>
}
