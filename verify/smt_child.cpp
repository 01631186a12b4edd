#include "verify/smt_child.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "ir/child_process.h"

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
  const ir::ChildOutput run =
      ir::run_in_child([&solve](int fd) { ir::write_all(fd, encode(solve())); },
                       timeout_ms + std::max(2000u, timeout_ms / 2));
  if (!run.forked) return solve();
  SmtAnswer ans;
  const std::string name = solver;
  if (run.killed) {
    ans.reason =
        name + ": no answer within the time limit (" + std::to_string(timeout_ms) + " ms); stopped (timeout)";
  } else if (!decode(run.bytes, ans)) {
    ans = SmtAnswer{};
    ans.reason = WIFSIGNALED(run.status)
                     ? name + ": the solver died (signal " + std::to_string(WTERMSIG(run.status)) + ")"
                     : name + ": no answer";
  }
  return ans;
}

}  // namespace parity::verify
