// What a verify run is doing, published for a display on another thread (the
// progress line `parity verify` draws on a terminal). Written by the verifier,
// read at any time; all fields are atomics.
#pragma once
#include <atomic>
#include <cstddef>

namespace parity::verify {

struct Progress {
  // A static string: "validating", "building stages", "proving stages",
  // "checking the whole plan".
  std::atomic<const char*> phase{"validating"};
  std::atomic<size_t> done{0}, total{0};  // units of the phase (stages, obligations); total 0: unknown

  void start(const char* p, size_t n) {
    total.store(0);
    done.store(0);
    phase.store(p);
    total.store(n);
  }
};

// Null-safe helpers, so the verifier can call them unconditionally.
inline void progress_start(Progress* p, const char* phase, size_t total = 0) {
  if (p) p->start(phase, total);
}
inline void progress_step(Progress* p, size_t n = 1) {
  if (p) p->done.fetch_add(n, std::memory_order_relaxed);
}

}  // namespace parity::verify
