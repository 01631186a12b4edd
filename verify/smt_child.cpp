#include "verify/smt_child.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

namespace parity::verify {

namespace {

// status, reason, then (variable, value) pairs; all in this machine's byte order.
std::string encode(const SmtAnswer& a) {
  std::string s;
  auto put = [&s](const void* p, size_t n) { s.append(static_cast<const char*>(p), n); };
  const int32_t st = static_cast<int32_t>(a.status);
  const uint64_t n = a.reason.size(), m = a.model.size();
  put(&st, sizeof st);
  put(&n, sizeof n);
  s += a.reason;
  put(&m, sizeof m);
  for (const auto& [k, v] : a.model) {
    put(&k, sizeof k);
    put(&v, sizeof v);
  }
  return s;
}

bool decode(const std::string& s, SmtAnswer& a) {
  size_t at = 0;
  auto get = [&](void* p, size_t n) {
    if (n > s.size() - at) return false;
    std::memcpy(p, s.data() + at, n);
    at += n;
    return true;
  };
  int32_t st = 0;
  uint64_t n = 0, m = 0;
  if (!get(&st, sizeof st) || st < 0 || st > 2 || !get(&n, sizeof n) || n > s.size() - at)
    return false;
  a.status = static_cast<SmtStatus>(st);
  a.reason = s.substr(at, n);
  at += n;
  if (!get(&m, sizeof m)) return false;
  for (uint64_t i = 0; i < m; ++i) {
    uint32_t k = 0;
    double v = 0;
    if (!get(&k, sizeof k) || !get(&v, sizeof v)) return false;
    a.model[k] = v;
  }
  return at == s.size();
}

}  // namespace

SmtAnswer solve_in_child(const char* solver, unsigned timeout_ms,
                         const std::function<SmtAnswer()>& solve) {
  int fds[2];
  if (::pipe(fds) != 0) return solve();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return solve();
  }
  if (pid == 0) {
    ::close(fds[0]);
    const std::string out = encode(solve());
    for (size_t at = 0; at < out.size();) {
      const ssize_t k = ::write(fds[1], out.data() + at, out.size() - at);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) break;
      at += static_cast<size_t>(k);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(timeout_ms + std::max(2000u, timeout_ms / 2));
  std::string buf;
  bool killed = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char tmp[65536];
    const ssize_t k = ::read(fds[0], tmp, sizeof tmp);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    buf.append(tmp, static_cast<size_t>(k));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  SmtAnswer ans;
  const std::string name = solver;
  if (killed) {
    ans.reason =
        name + ": no answer within the time limit (" + std::to_string(timeout_ms) + " ms); stopped";
  } else if (!decode(buf, ans)) {
    ans = SmtAnswer{};
    ans.reason = WIFSIGNALED(status)
                     ? name + ": the solver died (signal " + std::to_string(WTERMSIG(status)) + ")"
                     : name + ": no answer";
  }
  return ans;
}

}  // namespace parity::verify
