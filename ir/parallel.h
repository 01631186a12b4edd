// Runs fn(0..n-1) on up to `threads` threads, each taking the next index. An
// exception stops handing out indices; the one of the lowest index is
// rethrown after every thread has finished, so errors come out as they would
// sequentially.
#pragma once
#include <cstddef>
#include <functional>

namespace parity::ir {

void parallel_for(size_t n, size_t threads, const std::function<void(size_t)>& fn);

// One thread per hardware thread (at least one).
size_t hardware_threads();

}  // namespace parity::ir
