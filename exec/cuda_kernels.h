// The CUDA side of --backend cuda: device queries and cuBLAS matmul. The
// executable reaches them through cuda_loader.cpp, which loads the CUDA module
// (cuda_matmul.cpp, comm_nccl.cpp, cuda_kernels.cu) on first use; without the
// module built() is false and the rest throws Unsupported with the reason.
#pragma once
#include <cstddef>
#include <string>

#include "ir/tensor.h"

namespace parity::exec::cuda {

// Whether the CUDA module (CUDA, cuBLAS and NCCL) is built and loads here.
bool built();
// Why built() is false ("" when it is true).
std::string unavailable_reason();
// Visible CUDA devices (0 without a build, a driver or a GPU).
int device_count();
// built() && device_count() > 0.
inline bool available() { return built() && device_count() > 0; }

// matmul as exec::matmul_blas (same shapes and broadcasting), through cuBLAS on
// the current device; operands are copied in and the result out.
template <class F>
ir::Tensor<F> matmul(const ir::Tensor<F>& a, const ir::Tensor<F>& b, bool ta, bool tb);

// Device kernels (cuda_kernels.cu), inside the module only; `stream` is a cudaStream_t.
void round_bf16_device(float* data, size_t n, void* stream);
void scale_device(float* data, size_t n, float factor, void* stream);
void scale_device(double* data, size_t n, double factor, void* stream);

}  // namespace parity::exec::cuda
