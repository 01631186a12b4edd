// Device kernels of the CUDA backend: bf16 rounding (ties to even, as
// exec/bf16.h) and scaling.
#include <cuda_runtime.h>

#include <cstdint>

#include "exec/cuda_kernels.h"

namespace parity::exec::cuda {

namespace {
__global__ void round_bf16_kernel(float* x, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(blockDim.x) * gridDim.x) {
    uint32_t u = __float_as_uint(x[i]);
    if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN stays a quiet NaN
      x[i] = __uint_as_float((u | 0x00400000u) & 0xffff0000u);
      continue;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    x[i] = __uint_as_float(u & 0xffff0000u);
  }
}

template <class F>
__global__ void scale_kernel(F* x, size_t n, F f) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(blockDim.x) * gridDim.x)
    x[i] = f * x[i];
}

unsigned blocks(size_t n) { return static_cast<unsigned>(n / 256 + 1 < 4096 ? n / 256 + 1 : 4096); }
}  // namespace

void round_bf16_device(float* data, size_t n, void* stream) {
  if (n) round_bf16_kernel<<<blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(data, n);
}
void scale_device(float* data, size_t n, float factor, void* stream) {
  if (n) scale_kernel<<<blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(data, n, factor);
}
void scale_device(double* data, size_t n, double factor, void* stream) {
  if (n) scale_kernel<<<blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(data, n, factor);
}

}  // namespace parity::exec::cuda
