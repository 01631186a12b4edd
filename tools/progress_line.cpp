#include "tools/progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace parity::cli {

ProgressLine::ProgressLine(const std::string& label) {
  const char* term = std::getenv("TERM");
  if (!isatty(STDERR_FILENO) || std::getenv("CI") || (term && std::string(term) == "dumb")) return;
  double delay = 0.5;
  if (const char* e = std::getenv("PARITY_PROGRESS_AFTER")) delay = std::atof(e);
  std::string name = label.size() > 32 ? "..." + label.substr(label.size() - 29) : label;
  // With no delay the first line is drawn at once, not when the thread runs.
  bool shown = delay <= 0;
  if (shown) fmt::print(stderr, "\r\033[K| {}: {}", name, line(0));
  worker_ = std::thread([this, name, delay, shown]() mutable {
    using namespace std::chrono;
    auto t0 = steady_clock::now();
    std::unique_lock<std::mutex> lk(m_);
    for (int k = 0; !done_; ++k) {
      double s = duration<double>(steady_clock::now() - t0).count();
      if (s < delay) {
        cv_.wait_for(lk, milliseconds(100));
        continue;
      }
      fmt::print(stderr, "\r\033[K{} {}: {}", "|/-\\"[k % 4], name, line(s));
      std::fflush(stderr);
      shown = true;
      cv_.wait_for(lk, milliseconds(200), [this] { return done_; });
    }
    if (shown) fmt::print(stderr, "\r\033[K");
  });
}

ProgressLine::~ProgressLine() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard<std::mutex> lk(m_);
    done_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

std::string ProgressLine::line(double seconds) const {
  std::string s = state_.phase.load();
  size_t total = state_.total.load(), done = std::min(state_.done.load(), total);
  if (total) {
    constexpr size_t kWidth = 20;
    size_t fill = done * kWidth / total;
    s += fmt::format(" [{}{}] {}/{}", std::string(fill, '#'), std::string(kWidth - fill, '.'), done, total);
  }
  return s + fmt::format(" {:.1f} s", seconds);
}

}  // namespace parity::cli
