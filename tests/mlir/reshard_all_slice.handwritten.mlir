// expect-cmd: verify {dir}/reshard_all_slice.mlir
// expect-exit: 0
// expect-error: VERIFIED
// A hand-written plan for reshard_all_slice.mlir: the all_slice spelled as
// tensor.extract_slice at offset 4 * process index.
shard.grid @grid(shape = 2)
func.func @reshard(%arg0: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.exp ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %idx = shard.process_multi_index on @grid axes = [0] : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %off = arith.muli %idx, %c4 : index
  %slice = tensor.extract_slice %1[0, %off] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %2 = tensor.empty() : tensor<4x4xf32>
  %3 = linalg.mul ins(%slice, %slice : tensor<4x4xf32>, tensor<4x4xf32>) outs(%2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}
