// Numeric execution of a case: the spec on one device, and the plan with every
// rank running its own flattened program (ir::flatten: loops unrolled, so the
// pipeline order and microbatch loops are the program's) on its communicator.
// Program inputs are sliced from the spec inputs through their region
// placements; every placed plan value is recorded as it is defined and
// assembled back into spec coordinates (partial placements summed over their
// axes) for comparison.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/comm.h"
#include "exec/inputs.h"
#include "exec/kernels.h"
#include "ir/plan.h"

namespace parity::exec {

enum class Ranks { threads, mpi };
const char* ranks_name(Ranks r);

struct RunOptions {
  DType dtype = DType::f32;
  Device device = Device::cpu;  // cuda: cuBLAS matmul, and NCCL under --ranks mpi
  Ranks ranks = Ranks::threads;
  double timeout_s = 30;  // longest wait of one communication call
  bool blas = true;       // matmul through OpenBLAS on the CPU
  SumOrder order = SumOrder::forward;
  // The control run (compare.h): every float value the run defines is moved
  // by up to one unit in the last place of `dtype`, by a pseudo-random
  // amount fixed by its name and element, before it is rounded to `dtype`.
  bool perturb = false;
};

// A failed run: the first error (the cause) first, then other ranks' errors.
struct RunError : std::runtime_error {
  explicit RunError(std::vector<std::string> errs);
  std::vector<std::string> errors;
};

// Runs the spec on one device; returns every value it defines, inputs included
// (the last instance of values defined in loops).
Values run_spec(const ir::Case& c, const Values& inputs, const RunOptions& o);

// One placed plan value as one rank defined it (once per loop iteration).
struct PlacedValue {
  size_t placement = 0;  // index into plan.placements
  int64_t rank = 0;
  std::string iter;  // "mb=1", "" outside loops
  ir::Bindings b;    // rank bindings, dims and loop indices: evaluates the region
  std::string op;    // the op that defined it
  size_t seq = 0;    // position in the rank's unrolled program
  ir::Tensor<double> value;
};

struct PlanRun {
  bool root = true;                 // false on MPI ranks other than 0, which hold no results
  std::vector<PlacedValue> values;  // every rank's, ordered by (seq, rank)
  int64_t ranks = 0;                // ranks that ran a program
  double seconds = 0;               // wall time of the plan's execution
};

// Runs the plan. With Ranks::threads every rank runs here, one thread each; with
// Ranks::mpi this process runs the rank of `world` (an MPI or NCCL communicator,
// whose size must equal the mesh size) and the root gathers every rank's values.
// Throws RunError when a rank fails (a timeout names the rank, op and peers).
PlanRun run_plan(const ir::Case& c, const Values& inputs, const RunOptions& o,
                 Communicator* world = nullptr);

// A placed value in spec coordinates: a region's values (a partial placement
// summed over its ranks) at `offset` of spec value `spec_value`.
struct Piece {
  std::string spec_value;
  std::vector<int64_t> offset;
  ir::Tensor<double> value;
  std::string where;  // `tp.o_part on rank 0 (tp=0) + rank 1 (tp=1) (mb=0)`
  size_t seq = 0;
};
std::vector<Piece> assemble(const ir::Plan& p, const std::vector<PlacedValue>& values);

}  // namespace parity::exec
