// cuBLAS matmul for --backend cuda, and device queries (in the CUDA module).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "exec/comm.h"
#include "exec/cuda_kernels.h"
#include "exec/kernels.h"
#include "ir/semantics.h"

namespace parity::exec::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("{}: cuBLAS status {}", what, static_cast<int>(s)));
}

// One handle per thread (threads of --ranks threads share the device).
cublasHandle_t handle() {
  thread_local struct H {
    cublasHandle_t h = nullptr;
    ~H() {
      if (h) cublasDestroy(h);
    }
  } h;
  if (!h.h) check(cublasCreate(&h.h), "cublasCreate");
  return h.h;
}

template <class F>
struct DeviceBuf {
  explicit DeviceBuf(size_t n) : n(n) {
    if (n) check(cudaMalloc(&p, n * sizeof(F)), "cudaMalloc");
  }
  ~DeviceBuf() {
    if (p) cudaFree(p);
  }
  DeviceBuf(const DeviceBuf&) = delete;
  DeviceBuf& operator=(const DeviceBuf&) = delete;
  F* p = nullptr;
  size_t n;
};

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
void gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, const float* a, int lda,
          const float* b, int ldb, float* c) {
  const float one = 1, zero = 0;
  check(cublasSgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                    &one, b, ldb, a, lda, &zero, c, n),
        "cublasSgemm");
}
void gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, const double* a, int lda,
          const double* b, int ldb, double* c) {
  const double one = 1, zero = 0;
  check(cublasDgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                    &one, b, ldb, a, lda, &zero, c, n),
        "cublasDgemm");
}
}  // namespace

template <class F>
ir::Tensor<F> matmul(const ir::Tensor<F>& a, const ir::Tensor<F>& b, bool ta, bool tb) {
  if (device_count() == 0) throw Unsupported("no CUDA device (--backend cuda)");
  check_matmul(a.shape, b.shape, ta, tb);
  size_t ra = a.rank(), rb = b.rank();
  int64_t m = ta ? a.shape[ra - 1] : a.shape[ra - 2], k = ta ? a.shape[ra - 2] : a.shape[ra - 1];
  int64_t n = tb ? b.shape[rb - 2] : b.shape[rb - 1];
  std::vector<int64_t> ba(a.shape.begin(), a.shape.end() - 2),
      bb(b.shape.begin(), b.shape.end() - 2);
  ir::Tensor<F> batch;
  batch.shape = ir::sem::bcast_shape(ba, bb);
  ir::Tensor<F> out;
  out.shape = batch.shape;
  out.shape.push_back(m);
  out.shape.push_back(n);
  out.data.assign(static_cast<size_t>(ir::sem::num_el(out.shape)), F(0));
  if (m == 0 || n == 0 || k == 0) return out;
  DeviceBuf<F> da(a.data.size()), db(b.data.size()), dc(out.data.size());
  check(cudaMemcpy(da.p, a.data.data(), a.data.size() * sizeof(F), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  check(cudaMemcpy(db.p, b.data.data(), b.data.size() * sizeof(F), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  cublasHandle_t h = handle();
  int64_t nb = ir::sem::num_el(batch.shape);
  for (int64_t i = 0; i < nb; ++i) {
    auto idx = batch.index_of(i);
    gemm(h, ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
         da.p + ir::sem::bcast_flat(ba, idx) * m * k, static_cast<int>(ta ? m : k),
         db.p + ir::sem::bcast_flat(bb, idx) * k * n, static_cast<int>(tb ? k : n),
         dc.p + i * m * n);
  }
  check(cudaMemcpy(out.data.data(), dc.p, out.data.size() * sizeof(F), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  return out;
}

template ir::Tensor<float> matmul(const ir::Tensor<float>&, const ir::Tensor<float>&, bool, bool);
template ir::Tensor<double> matmul(const ir::Tensor<double>&, const ir::Tensor<double>&, bool,
                                   bool);

}  // namespace parity::exec::cuda
