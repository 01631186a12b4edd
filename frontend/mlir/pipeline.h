// MLIR's sharding-propagation and shard-partition, run in a forked child so
// that a crash or an abort inside MLIR becomes a reported failure, never a
// parity crash.
#pragma once
#include <string>

#include "frontend/mlir/context.h"

namespace parity::frontend::mlirio {

struct PipelineOutput {
  std::string propagated;   // after sharding-propagation, with locations
  std::string partitioned;  // after shard-partition, with locations ("" unless asked)
};

// Runs on a copy of `m` (the child's); `m` itself is untouched. Throws
// MlirFailure naming the pass with MLIR's diagnostics, or the signal on a crash.
PipelineOutput run_pipeline(Session& s, mlir::ModuleOp m, bool partition);

}  // namespace parity::frontend::mlirio
