// The address-space limit of the checking commands. A tensor the reduction
// had to keep whole (a vocabulary of 32768 beside a literal token id) can
// make the symbolic check ask for more memory than the machine has; the
// kernel's OOM killer would then end the process with no verdict. Under a
// limit the allocation fails instead, and the verdict is UNKNOWN (main.cpp).
// Not for `parity run --backend cuda`: CUDA reserves address space far past
// physical memory.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tools/cli.h"

namespace parity::cli {

#if defined(__SANITIZE_ADDRESS__)
#define PARITY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PARITY_ASAN 1
#endif
#endif

void limit_memory() {
#ifdef PARITY_ASAN
  return;  // AddressSanitizer reserves terabytes of shadow address space
#endif
  double gb = 0;
  if (const char* e = std::getenv("PARITY_MAX_MEMORY_GB")) {
    gb = std::atof(e);
    if (gb <= 0) return;  // 0: no limit
  } else {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return;
    gb = 0.8 * static_cast<double>(pages) * static_cast<double>(page) / (1 << 30);
  }
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) != 0) return;
  const auto want = static_cast<rlim_t>(gb * (1 << 30));
  if (r.rlim_max != RLIM_INFINITY && want > r.rlim_max) return;
  if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur <= want) return;  // a tighter limit stays
  r.rlim_cur = want;
  setrlimit(RLIMIT_AS, &r);
}

}  // namespace parity::cli
