#include "frontend/mlir/pipeline.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Shard/Transforms/Passes.h>
#include <mlir/IR/OperationSupport.h>
#include <mlir/Pass/PassManager.h>

#include "frontend/mlir/api.h"

namespace parity::frontend::mlirio {

namespace {

// Child-to-parent records: a tag byte, a 64-bit length, the payload.
enum Tag : char { kStage = 'S', kPropagated = 'D', kPartitioned = 'P', kError = 'E' };

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

void send(int fd, Tag t, const std::string& s) {
  uint64_t n = s.size();
  char c = t;
  write_all(fd, &c, 1);
  write_all(fd, reinterpret_cast<const char*>(&n), sizeof n);
  write_all(fd, s.data(), s.size());
}

std::string print_with_locs(mlir::ModuleOp m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m->print(os, mlir::OpPrintingFlags().enableDebugInfo(true, false));
  os.flush();
  return s;
}

// Runs in the child: never returns.
[[noreturn]] void child(int fd, Session& s, mlir::ModuleOp m, bool partition) {
  s.take_diags();
  send(fd, kStage, "sharding-propagation");
  mlir::PassManager pm(&s.ctx(), mlir::ModuleOp::getOperationName());
  pm.nest<mlir::func::FuncOp>().addPass(mlir::shard::createShardingPropagation());
  if (mlir::failed(pm.run(m))) {
    send(fd, kError, s.take_diags());
    ::_exit(1);
  }
  send(fd, kPropagated, print_with_locs(m));
  if (partition) {
    send(fd, kStage, "shard-partition");
    mlir::PassManager pm2(&s.ctx(), mlir::ModuleOp::getOperationName());
    pm2.nest<mlir::func::FuncOp>().addPass(mlir::shard::createPartition());
    if (mlir::failed(pm2.run(m))) {
      send(fd, kError, s.take_diags());
      ::_exit(1);
    }
    send(fd, kPartitioned, print_with_locs(m));
  }
  ::_exit(0);
}

}  // namespace

PipelineOutput run_pipeline(Session& s, mlir::ModuleOp m, bool partition) {
  int fds[2];
  if (::pipe(fds) != 0) throw MlirFailure(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) throw MlirFailure(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], s, m, partition);
  }
  ::close(fds[1]);
  std::string buf;
  char tmp[65536];
  for (;;) {
    ssize_t k = ::read(fds[0], tmp, sizeof tmp);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    buf.append(tmp, static_cast<size_t>(k));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  PipelineOutput out;
  std::string stage = "sharding-propagation", error;
  for (size_t i = 0; i + 1 + sizeof(uint64_t) <= buf.size();) {
    char tag = buf[i];
    uint64_t n = 0;
    std::memcpy(&n, buf.data() + i + 1, sizeof n);
    i += 1 + sizeof n;
    if (n > buf.size() - i) break;  // cut short by a crash
    std::string payload = buf.substr(i, n);
    i += n;
    if (tag == kStage) stage = payload;
    if (tag == kPropagated) out.propagated = std::move(payload);
    if (tag == kPartitioned) out.partitioned = std::move(payload);
    if (tag == kError) error = std::move(payload);
  }
  if (WIFSIGNALED(status))
    throw MlirFailure("MLIR's " + stage + " crashed (signal " + std::to_string(WTERMSIG(status)) + ", " +
                      strsignal(WTERMSIG(status)) + ")");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || (partition && out.partitioned.empty()))
    throw MlirFailure("MLIR's " + stage + " failed" + (error.empty() ? "" : ":\n" + error));
  return out;
}

}  // namespace parity::frontend::mlirio
