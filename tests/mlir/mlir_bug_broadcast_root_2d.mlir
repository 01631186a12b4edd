// expect-cmd: verify {dir}/specs/mlir_bug_broadcast_root_2d.spec.mlir
// expect-exit: 1
// expect-error: MISMATCH
// Hand-partitioned plan against its annotated spec (specs/mlir_bug_broadcast_root_2d.spec.mlir): broadcast from root [0,1] which holds zeros
shard.grid @g(shape = 2x2)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %i:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = arith.cmpi eq, %i#0, %c1 : index
  %b = arith.cmpi eq, %i#1, %c0 : index
  %ab = arith.andi %a, %b : i1
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %v = scf.if %ab -> (tensor<4xf32>) {
    %y = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  } else {
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %f : tensor<4xf32>
  }
  %r = shard.broadcast %v on @g grid_axes = [0, 1] root = [0, 1] : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
