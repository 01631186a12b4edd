// The table of entry points the CUDA module (libparity_cuda.so) hands to the
// parity executable. The module is loaded with dlopen on first use of
// --backend cuda, so that commands that never touch a GPU (verify, validate,
// gen, ...) do not pay for loading and initializing cuBLAS and NCCL at start-up
// (about half a second). Both sides are built from the same tree; the version
// guards against a stale module from another build.
#pragma once
#include <memory>

#include "exec/comm.h"
#include "ir/tensor.h"

namespace parity::exec::cuda {

inline constexpr int kApiVersion = 1;

struct Api {
  int version = kApiVersion;
  int (*device_count)();
  ir::Tensor<float> (*matmul_f32)(const ir::Tensor<float>&, const ir::Tensor<float>&, bool, bool);
  ir::Tensor<double> (*matmul_f64)(const ir::Tensor<double>&, const ir::Tensor<double>&, bool,
                                   bool);
  std::unique_ptr<Communicator> (*make_nccl_comm)(std::unique_ptr<Communicator> boot, bool bf16);
};

}  // namespace parity::exec::cuda

// Exported by the module; returns a table that lives as long as the process.
extern "C" const parity::exec::cuda::Api* parity_cuda_api();
