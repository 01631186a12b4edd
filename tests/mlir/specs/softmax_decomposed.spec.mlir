// The spec side of softmax_*.mlir: softmax written without its max shift, exp(x) / rowsum(exp(x)).
shard.grid @g(shape = 2)
func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
%e = tensor.empty() : tensor<4x4xf32>
  %x = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %den = linalg.reduce ins(%x : tensor<4x4xf32>) outs(%f2 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %e3 = tensor.empty() : tensor<4x4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(i,j) -> (i,j)>, affine_map<(i,j) -> (i)>, affine_map<(i,j) -> (i,j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %den : tensor<4x4xf32>, tensor<4xf32>) outs(%e3 : tensor<4x4xf32>) {
    ^bb0(%u: f32, %d: f32, %o: f32):
      %r = arith.divf %u, %d : f32
      linalg.yield %r : f32
  } -> tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}
