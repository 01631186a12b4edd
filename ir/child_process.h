// Runs a piece of work in a forked child and collects what it writes to a
// pipe: a solver query that may not stop at its own limit, an MLIR pass that
// may crash. The parent reads until the child closes the pipe or the
// deadline passes (then the child is killed), and reaps it either way.
#pragma once
#include <functional>
#include <optional>
#include <string>

namespace parity::ir {

struct ChildOutput {
  bool forked = false;  // false: no pipe or no child could be made (`error` says why)
  std::string error;
  std::string bytes;    // everything the child wrote
  bool killed = false;  // stopped at the deadline
  int status = 0;       // waitpid's status
};

// `body` runs in the child with the pipe's write end and must end in _exit.
ChildOutput run_in_child(const std::function<void(int fd)>& body,
                         std::optional<unsigned> deadline_ms);

// Writes all of `data` to `fd`, retrying short writes (a child's last words).
void write_all(int fd, const std::string& data);

}  // namespace parity::ir
