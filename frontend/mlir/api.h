// Importing MLIR into parity: a `func.func` over tensors (linalg, tosa, arith,
// math, tensor) becomes the spec; the same function after MLIR's own
// `sharding-propagation` + `shard-partition` (or a hand-written SPMD function
// using `shard` collectives) becomes a one-program plan whose placements come
// from the shardings of the spec's arguments and results. No MLIR header leaks
// out of this one: tools link the library without MLIR's include paths.
#pragma once
#include <stdexcept>
#include <string>

#include "ir/plan.h"

namespace parity::frontend::mlirio {

// The input is valid MLIR but uses something the importer does not model (an
// op, a halo, a dynamic shape). The verdict is UNKNOWN, naming it.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// MLIR's own pass (propagation or partition) failed, produced invalid IR or
// crashed. The verdict is UNKNOWN with MLIR's diagnostic.
class MlirFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Malformed MLIR is ir::InvalidInput carrying MLIR's diagnostic with its
// location (exit 2).

struct Options {
  std::string func;  // the function to import; empty: the only one in the module
};

struct Partitioned {
  ir::Case c;
  std::string partitioned;  // MLIR's output, printed for --print-partitioned
};

// Parses an annotated module, runs sharding-propagation and shard-partition on
// it, and imports the input as the spec and MLIR's output as the plan.
Partitioned partition_and_import(const std::string& path, const Options& opt);

// A spec module (annotated or not) and a partitioned plan module; the plan's
// placements come from the spec's argument and result shardings (after
// sharding-propagation, as the partitioner would see them).
ir::Case import_pair(const std::string& spec_path, const std::string& plan_path, const Options& opt);

bool is_mlir_path(const std::string& path);

}  // namespace parity::frontend::mlirio
