#include "frontend/mlir/shardings.h"

#include <mlir/Dialect/Shard/IR/ShardOps.h>
#include <mlir/IR/BuiltinTypes.h>

#include <optional>

#include "frontend/mlir/api.h"
#include "frontend/mlir/context.h"
#include "ir/error.h"

namespace parity::frontend::mlirio {

GridMesh grid_of(mlir::ModuleOp m) {
  GridMesh g;
  int grids = 0;
  for (auto grid : m.getOps<mlir::shard::GridOp>()) {
    if (++grids > 1)
      throw Unsupported(loc_str(grid.getLoc()) +
                        ": unsupported: more than one shard.grid in the module");
    g.grid = grid.getSymName().str();
    int64_t k = 0;
    for (int64_t s : grid.getShape()) {
      if (mlir::ShapedType::isDynamic(s))
        throw Unsupported(loc_str(grid.getLoc()) + ": unsupported: a grid with a dynamic size");
      // MLIR's verifier accepts it, and shard-partition divides by it.
      if (s < 1)
        throw ir::InvalidInput(ir::Diag{"", "", "", "",
                                        loc_str(grid.getLoc()) + ": shard.grid @" +
                                            grid.getSymName().str() + " axis " + std::to_string(k) +
                                            " has size " + std::to_string(s) +
                                            "; every grid axis needs at least one process"});
      g.mesh.axes.push_back({"ax" + std::to_string(k++), s});
    }
  }
  if (grids == 0) throw Unsupported("unsupported: the module has no shard.grid");
  return g;
}

ir::DimExpr linear_index(const ir::Mesh& mesh, const std::vector<int64_t>& axes) {
  ir::DimExpr e(int64_t{0});
  bool first = true;
  for (auto a : axes) {
    const auto& ax = mesh.axes.at(static_cast<size_t>(a));
    auto s = ir::DimExpr::sym("$" + ax.name);
    e = first ? s : e * ir::DimExpr(ax.size) + s;
    first = false;
  }
  return e;
}

namespace {

std::vector<ir::Range> region_of(mlir::shard::ShardOp s, const GridMesh& g) {
  auto where = loc_str(s.getLoc());
  auto fail = [&](const std::string& what) -> std::vector<ir::Range> {
    throw Unsupported(where + ": unsupported sharding: " + what);
  };
  auto sop = s.getSharding().getDefiningOp<mlir::shard::ShardingOp>();
  if (!sop) return fail("not defined by a shard.sharding op");
  if (sop.getGrid() != g.grid) return fail("on another grid than @" + g.grid);
  if (!sop.getStaticHaloSizes().empty() || !sop.getDynamicHaloSizes().empty())
    return fail("halo sizes are not supported");
  if (!sop.getStaticShardedDimsOffsets().empty() || !sop.getDynamicShardedDimsOffsets().empty())
    return fail("explicit sharded_dims_offsets are not supported");
  auto t = mlir::dyn_cast<mlir::RankedTensorType>(s.getSrc().getType());
  if (!t || !t.hasStaticShape()) return fail("dynamic shapes are not supported");
  auto split = sop.getSplitAxes().getAxes();
  // Lists past the rank must be empty (`[[]]` is how a rank-0 tensor is
  // written unsplit; see api.cpp, reparsable).
  for (size_t d = static_cast<size_t>(t.getRank()); d < split.size(); ++d)
    if (!split[d].asArrayRef().empty()) return fail("more split dims than the tensor has");
  std::vector<ir::Range> r;
  bool sharded = false;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    int64_t D = t.getDimSize(d);
    std::vector<int64_t> axes;
    if (static_cast<size_t>(d) < split.size())
      for (auto a : split[static_cast<size_t>(d)].asArrayRef()) {
        if (a < 0 || static_cast<size_t>(a) >= g.mesh.axes.size())
          return fail("grid axis out of range");
        axes.push_back(a);
      }
    int64_t n = 1;
    for (auto a : axes) n *= g.mesh.axes[static_cast<size_t>(a)].size;
    if (D % n != 0)
      return fail("dim " + std::to_string(d) + " of size " + std::to_string(D) + " split " +
                  std::to_string(n) + " ways (uneven shards)");
    if (n > 1) sharded = true;
    int64_t size = D / n;
    r.push_back(
        {n > 1 ? linear_index(g.mesh, axes) * ir::DimExpr(size) : ir::DimExpr(int64_t{0}), size});
  }
  if (!sharded) r.clear();  // a replica: the whole tensor
  return r;
}

}  // namespace

FuncShardings func_shardings(mlir::func::FuncOp f, const GridMesh& g) {
  FuncShardings fs;
  mlir::Block& b = f.getBody().front();
  for (mlir::BlockArgument a : b.getArguments()) {
    std::vector<ir::Range> r;
    bool found = false;
    // The partitioner's rule: an argument's one use is a shard.shard, whose
    // sharding is the argument's, `annotate_for_users` or not.
    if (a.hasOneUse())
      if (auto s = mlir::dyn_cast<mlir::shard::ShardOp>(*a.getUsers().begin())) {
        fs.args.push_back(region_of(s, g));
        continue;
      }
    for (mlir::Operation* u : a.getUsers()) {
      auto s = mlir::dyn_cast<mlir::shard::ShardOp>(u);
      if (!s || s.getAnnotateForUsers()) continue;
      auto ri = region_of(s, g);
      if (found && !(ri == r))
        throw Unsupported(loc_str(s.getLoc()) +
                          ": unsupported: an argument annotated with two shardings");
      r = ri;
      found = true;
    }
    // Every use a shard.shard for its users, all with one sharding (after
    // propagation: `add(shard(a), a)` annotates both operands): that one. A
    // rule other than the partitioner's shows as a shape that does not match
    // the partitioned argument (INVALID), never as a wrong placement.
    if (!found && !a.use_empty()) {
      std::optional<std::vector<ir::Range>> same;
      bool all = true;
      for (mlir::Operation* u : a.getUsers()) {
        auto sh = mlir::dyn_cast<mlir::shard::ShardOp>(u);
        if (!sh) {
          all = false;
          break;
        }
        auto ri = region_of(sh, g);
        if (same && !(*same == ri)) all = false;
        same = ri;
      }
      if (all && same) r = *same;
    }
    fs.args.push_back(r);  // unannotated: replicated, as the partitioner assumes
  }
  mlir::Operation* ret = b.getTerminator();
  for (mlir::Value v : ret->getOperands()) {
    auto s = v.getDefiningOp<mlir::shard::ShardOp>();
    fs.results.push_back(s ? region_of(s, g) : std::vector<ir::Range>{});
  }
  return fs;
}

}  // namespace parity::frontend::mlirio
