// From `shard` annotations to parity's mesh and placements: the grid's axes
// become mesh axes `ax0, ax1, ...`; a tensor split along grid axes [a, b] on
// dim d holds the region [i*s, (i+1)*s) of that dim, where s is the dim size
// over the product of the axis sizes and i the row-major index over (a, b).
#pragma once
#include <string>
#include <vector>

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/BuiltinOps.h>

#include "ir/plan.h"

namespace parity::frontend::mlirio {

struct GridMesh {
  std::string grid;  // the shard.grid symbol
  ir::Mesh mesh;
};

// The module's one grid. Throws Unsupported when there is none, several, or a
// dynamic size.
GridMesh grid_of(mlir::ModuleOp m);

ir::DimExpr linear_index(const ir::Mesh& mesh, const std::vector<int64_t>& axes);

// One region per function argument and result (empty: replicated), read from
// the shard.shard annotations of a function after sharding-propagation.
struct FuncShardings {
  std::vector<std::vector<ir::Range>> args, results;
};
FuncShardings func_shardings(mlir::func::FuncOp f, const GridMesh& g);

}  // namespace parity::frontend::mlirio
