// Without CUDA: --backend cuda reports that this build cannot run it.
#include "exec/comm.h"
#include "exec/comm_nccl.h"
#include "exec/cuda_kernels.h"

namespace parity::exec {
namespace cuda {

bool built() { return false; }
int device_count() { return 0; }

template <class F>
ir::Tensor<F> matmul(const ir::Tensor<F>&, const ir::Tensor<F>&, bool, bool) {
  throw Unsupported("this build has no CUDA (--backend cuda)");
}
template ir::Tensor<float> matmul(const ir::Tensor<float>&, const ir::Tensor<float>&, bool, bool);
template ir::Tensor<double> matmul(const ir::Tensor<double>&, const ir::Tensor<double>&, bool,
                                   bool);

void round_bf16_device(float*, size_t, void*) { throw Unsupported("this build has no CUDA"); }
void scale_device(float*, size_t, float, void*) { throw Unsupported("this build has no CUDA"); }
void scale_device(double*, size_t, double, void*) { throw Unsupported("this build has no CUDA"); }

}  // namespace cuda

std::unique_ptr<Communicator> make_nccl_comm(std::unique_ptr<Communicator>, bool) {
  throw Unsupported("this build has no CUDA/NCCL (--backend cuda --ranks mpi)");
}

}  // namespace parity::exec
