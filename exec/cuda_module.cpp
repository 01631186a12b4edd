// The module's one exported symbol: the table the executable's loader
// (cuda_loader.cpp) reads after dlopen.
#include "exec/comm_nccl.h"
#include "exec/cuda_api.h"
#include "exec/cuda_kernels.h"

namespace parity::exec::cuda {
namespace {
// The module's own implementations (cuda_matmul.cpp, comm_nccl.cpp) carry the
// public names; these wrappers take their addresses under fixed signatures.
int count() { return device_count(); }
ir::Tensor<float> mm_f32(const ir::Tensor<float>& a, const ir::Tensor<float>& b, bool ta, bool tb) {
  return matmul(a, b, ta, tb);
}
ir::Tensor<double> mm_f64(const ir::Tensor<double>& a, const ir::Tensor<double>& b, bool ta,
                          bool tb) {
  return matmul(a, b, ta, tb);
}
std::unique_ptr<Communicator> nccl(std::unique_ptr<Communicator> boot, bool bf16) {
  return exec::make_nccl_comm(std::move(boot), bf16);
}
}  // namespace
}  // namespace parity::exec::cuda

extern "C" __attribute__((visibility("default"))) const parity::exec::cuda::Api* parity_cuda_api() {
  using namespace parity::exec::cuda;
  static const Api api{kApiVersion, &count, &mm_f32, &mm_f64, &nccl};
  return &api;
}
