// The CUDA side of --backend cuda: device queries and cuBLAS matmul (cuda_matmul.cpp),
// bf16 rounding on the device (cuda_kernels.cu). Without a CUDA build these are
// stubs (cuda_stub.cpp): available() is false and the rest throws Unsupported.
#pragma once
#include <cstddef>

#include "ir/tensor.h"

namespace parity::exec::cuda {

// Whether this build has CUDA, cuBLAS and NCCL (PARITY_HAVE_CUDA).
bool built();
// Visible CUDA devices (0 without a build, a driver or a GPU).
int device_count();
// built() && device_count() > 0.
inline bool available() { return built() && device_count() > 0; }

// matmul as exec::matmul_blas (same shapes and broadcasting), through cuBLAS on
// the current device; operands are copied in and the result out.
template <class F>
ir::Tensor<F> matmul(const ir::Tensor<F>& a, const ir::Tensor<F>& b, bool ta, bool tb);

// Device kernels (cuda_kernels.cu); `stream` is a cudaStream_t.
void round_bf16_device(float* data, size_t n, void* stream);
void scale_device(float* data, size_t n, float factor, void* stream);
void scale_device(double* data, size_t n, double factor, void* stream);

}  // namespace parity::exec::cuda
