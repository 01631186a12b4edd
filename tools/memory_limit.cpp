// The address-space limit of the checking commands. A tensor the reduction
// had to keep whole (a vocabulary of 32768 beside a literal token id) can
// make the symbolic check ask for more memory than the machine has; the
// kernel's OOM killer would then end the process with no verdict. Under a
// limit the allocation fails instead, and the verdict is UNKNOWN (main.cpp).
// Not for `parity run --backend cuda`: CUDA reserves address space far past
// physical memory.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "tools/cli.h"

namespace parity::cli {

#if defined(__SANITIZE_ADDRESS__)
#define PARITY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PARITY_ASAN 1
#endif
#endif

namespace {

// A field of /proc/meminfo in GiB; 0 when it cannot be read.
double meminfo_gb(const char* field, const char* file = "/proc/meminfo") {
  std::ifstream in(file);
  std::string key, unit;
  double kb = 0;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == field) return kb / (1 << 20);
  }
  return 0;
}

// This process's mapped address space (VmSize) in GiB.
double self_mapped_gb() { return meminfo_gb("VmSize:", "/proc/self/status"); }

// A number from a cgroup file; nullopt for "max" or a missing file.
std::optional<double> cgroup_number(const char* path) {
  std::ifstream in(path);
  std::string v;
  if (!(in >> v) || v == "max") return std::nullopt;
  try {
    return std::stod(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The container's memory limit less its current use, in GiB (cgroup v2,
// then v1); a large number when there is no limit.
double cgroup_free_gb() {
  constexpr double kNone = 1e12;
  const std::pair<const char*, const char*> files[] = {
      {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
      {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
  for (const auto& [limit, usage] : files)
    if (auto l = cgroup_number(limit); l && *l < 1e18) {
      const double used = cgroup_number(usage).value_or(0);
      return std::max(0.0, *l - used) / (1 << 30);
    }
  return kNone;
}

}  // namespace

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
    // What is actually free: the memory available now (other processes hold
    // the rest) and the container's limit less its use, of which half: a
    // second check started beside this one (a CI job's parallel tests) sees
    // the same memory free, and two at their caps must not be more than the
    // machine has. The limit is on address space, so what this process has
    // mapped already (libraries, thread stacks) is added back.
    const double free_gb = std::min(meminfo_gb("MemAvailable:"), cgroup_free_gb());
    if (free_gb > 0) gb = std::min(gb, self_mapped_gb() + 0.5 * free_gb);
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
