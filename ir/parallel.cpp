#include "ir/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace parity::ir {

size_t hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

void parallel_for(size_t n, size_t threads, const std::function<void(size_t)>& fn) {
  std::vector<std::exception_ptr> thrown(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (size_t i; !stop.load() && (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        thrown[i] = std::current_exception();
        stop = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(threads, n); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (auto& e : thrown)
    if (e) std::rethrow_exception(e);
}

}  // namespace parity::ir
