#include "ir/child_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace parity::ir {

void write_all(int fd, const std::string& data) {
  for (size_t at = 0; at < data.size();) {
    const ssize_t k = ::write(fd, data.data() + at, data.size() - at);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    at += static_cast<size_t>(k);
  }
}

ChildOutput run_in_child(const std::function<void(int fd)>& body,
                         std::optional<unsigned> deadline_ms) {
  ChildOutput out;
  int fds[2];
  if (::pipe(fds) != 0) {
    out.error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return out;
  }
  // Buffered output would otherwise be written twice, once by the child.
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.error = std::string("cannot fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return out;
  }
  if (pid == 0) {
    ::close(fds[0]);
    body(fds[1]);
    ::_exit(0);
  }
  out.forked = true;
  ::close(fds[1]);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(deadline_ms.value_or(0));
  char tmp[65536];
  for (;;) {
    int wait_ms = -1;
    if (deadline_ms) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        ::kill(pid, SIGKILL);
        out.killed = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, wait_ms);
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;  // interrupted, or a wake-up to look at the deadline
    const ssize_t k = ::read(fds[0], tmp, sizeof tmp);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    out.bytes.append(tmp, static_cast<size_t>(k));
  }
  ::close(fds[0]);
  while (::waitpid(pid, &out.status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

}  // namespace parity::ir
