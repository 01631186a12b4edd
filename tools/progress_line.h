// A one-line progress display on stderr while a command runs: the phase, a
// bar when the phase has a known size (stages, obligations), and the elapsed
// time. Only on a terminal, never under CI (CI set) or TERM=dumb, and only
// once a run takes longer than half a second (PARITY_PROGRESS_AFTER seconds).
#pragma once
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "verify/progress.h"

namespace parity::cli {

class ProgressLine {
 public:
  explicit ProgressLine(const std::string& label);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // Null when no display runs: the verifier then skips the bookkeeping.
  verify::Progress* sink() { return worker_.joinable() ? &state_ : nullptr; }
  // Names the phase (a static string) for commands that report by hand.
  void phase(const char* p, size_t total = 0) { state_.start(p, total); }
  void step() { ++state_.done; }

 private:
  std::string line(double seconds) const;

  verify::Progress state_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread worker_;
};

}  // namespace parity::cli
