#include "frontend/mlir/pipeline.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Shard/Transforms/Passes.h>
#include <mlir/IR/OperationSupport.h>
#include <mlir/Pass/PassManager.h>

#include "frontend/mlir/api.h"
#include "ir/child_process.h"

namespace parity::frontend::mlirio {

namespace {

// Child-to-parent records: a tag byte, a 64-bit length, the payload.
enum Tag : char { kStage = 'S', kPropagated = 'D', kPartitioned = 'P', kError = 'E' };

void send(int fd, Tag t, const std::string& s) {
  const uint64_t n = s.size();
  std::string rec(1, t);
  rec.append(reinterpret_cast<const char*>(&n), sizeof n);
  rec += s;
  ir::write_all(fd, rec);
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
  // No deadline: the passes are MLIR's own and end; a crash ends the child.
  const ir::ChildOutput run = ir::run_in_child([&](int fd) { child(fd, s, m, partition); }, std::nullopt);
  if (!run.forked) throw MlirFailure(run.error);
  const std::string& buf = run.bytes;
  const int status = run.status;

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
