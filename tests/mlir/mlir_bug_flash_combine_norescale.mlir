// expect-cmd: verify {dir}/specs/mlir_bug_flash_combine_norescale.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_flash_combine_norescale.spec.mlir): partial softmax stats combined without the exp(m_r - m) rescale
shard.grid @sp(shape = 2)
func.func @attn(%s: tensor<2x4xf32>, %v: tensor<4x2xf32>) -> tensor<2x2xf32> {
  %sh = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %mr = tosa.reduce_max %s {axis = 1 : i32} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %d = tosa.sub %s, %mr : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %ex = tosa.exp %d : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %lr = tosa.reduce_sum %ex {axis = 1 : i32} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %z = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<2x2xf32>
  %f4 = linalg.fill ins(%z : f32) outs(%e4 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %or = linalg.matmul ins(%ex, %v : tensor<2x4xf32>, tensor<4x2xf32>) outs(%f4 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = shard.all_reduce %mr on @sp grid_axes = [0] reduction = max : tensor<2x1xf32> -> tensor<2x1xf32>
  %dm = tosa.sub %mr, %m : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %sc = "tosa.const"() {values = dense<1.0> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %lrs = tosa.mul %lr, %sc, %sh : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<1xi8>) -> tensor<2x1xf32>
  %ors = tosa.mul %or, %sc, %sh : (tensor<2x2xf32>, tensor<2x1xf32>, tensor<1xi8>) -> tensor<2x2xf32>
  %l = shard.all_reduce %lrs on @sp grid_axes = [0] : tensor<2x1xf32> -> tensor<2x1xf32>
  %o = shard.all_reduce %ors on @sp grid_axes = [0] : tensor<2x2xf32> -> tensor<2x2xf32>
  %rl = tosa.reciprocal %l : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %out = tosa.mul %o, %rl, %sh : (tensor<2x2xf32>, tensor<2x1xf32>, tensor<1xi8>) -> tensor<2x2xf32>
  return %out : tensor<2x2xf32>
}
