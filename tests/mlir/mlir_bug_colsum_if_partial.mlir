// expect-cmd: verify {dir}/specs/mlir_bug_colsum_if_partial.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_colsum_if_partial.spec.mlir): ranks 2,3 return the partial instead of the all_reduced sum
shard.grid @g(shape = 4)
func.func @colsum(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%f : tensor<3xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %y = arith.addf %x, %acc : f32
      linalg.yield %y : f32
    }
  %out = shard.all_reduce %r on @g grid_axes = [0] : tensor<3xf32> -> tensor<3xf32>
  %i = shard.process_multi_index on @g axes = [0] : index
  %c2 = arith.constant 2 : index
  %lt = arith.cmpi slt, %i, %c2 : index
  %res = scf.if %lt -> (tensor<3xf32>) {
    scf.yield %out : tensor<3xf32>
  } else {
    scf.yield %r : tensor<3xf32>
  }
  return %res : tensor<3xf32>
}
