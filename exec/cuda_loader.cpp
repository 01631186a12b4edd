// --backend cuda through the CUDA module (libparity_cuda.so), loaded with
// dlopen the first time it is asked for: cuBLAS and NCCL initialize at load
// time, which every command would otherwise pay for at start-up. Without the
// module (a build without the toolkit, or a machine without its libraries)
// built() is false and the rest throws Unsupported with the loader's reason.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/comm_nccl.h"
#include "exec/cuda_api.h"
#include "exec/cuda_kernels.h"

namespace parity::exec {
namespace cuda {
namespace {

constexpr const char* kModule = "libparity_cuda.so";

struct Loaded {
  const Api* api = nullptr;
  std::string why;  // when api is null
};

// Where the module may be: $PARITY_CUDA_MODULE, beside the executable, in
// ../lib from it (an install), and where this build put it.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* e = std::getenv("PARITY_CUDA_MODULE")) return {e};
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    std::filesystem::path dir =
        std::filesystem::path(std::string(buf, static_cast<size_t>(n))).parent_path();
    out.push_back((dir / kModule).string());
    out.push_back((dir / ".." / "lib" / kModule).string());
  }
#ifdef PARITY_CUDA_MODULE_PATH
  out.push_back(PARITY_CUDA_MODULE_PATH);
#endif
  return out;
}

const Loaded& loaded() {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] {
#ifndef PARITY_HAVE_CUDA
    l.why = "this build has no CUDA";
    return;
#endif
    std::string errs, looked;
    for (const std::string& path : candidates()) {
      looked += (looked.empty() ? "" : ", ") + path;
      if (!std::filesystem::exists(path)) continue;
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        errs += fmt::format("; {}: {}", path, dlerror());
        continue;
      }
      auto get = reinterpret_cast<const Api* (*)()>(dlsym(h, "parity_cuda_api"));
      const Api* api = get ? get() : nullptr;
      if (!api || api->version != kApiVersion) {
        errs += fmt::format("; {}: not a parity CUDA module of this version", path);
        continue;
      }
      l.api = api;  // never unloaded: CUDA and NCCL keep threads of their own
      return;
    }
    l.why = errs.empty() ? fmt::format("the CUDA module was not found (looked for: {})", looked)
                         : "the CUDA module could not be loaded" + errs;
  });
  return l;
}

const Api& api() {
  const Loaded& l = loaded();
  if (!l.api) throw Unsupported(l.why + " (--backend cuda)");
  return *l.api;
}

}  // namespace

bool built() { return loaded().api != nullptr; }
std::string unavailable_reason() { return loaded().api ? std::string() : loaded().why; }

int device_count() { return built() ? api().device_count() : 0; }

template <class F>
ir::Tensor<F> matmul(const ir::Tensor<F>& a, const ir::Tensor<F>& b, bool ta, bool tb) {
  if constexpr (std::is_same_v<F, float>)
    return api().matmul_f32(a, b, ta, tb);
  else
    return api().matmul_f64(a, b, ta, tb);
}
template ir::Tensor<float> matmul(const ir::Tensor<float>&, const ir::Tensor<float>&, bool, bool);
template ir::Tensor<double> matmul(const ir::Tensor<double>&, const ir::Tensor<double>&, bool,
                                   bool);

}  // namespace cuda

std::unique_ptr<Communicator> make_nccl_comm(std::unique_ptr<Communicator> boot, bool bf16) {
  return cuda::api().make_nccl_comm(std::move(boot), bf16);
}

}  // namespace parity::exec
