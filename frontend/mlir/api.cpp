#include "frontend/mlir/api.h"

#include <set>

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Shard/IR/ShardOps.h>

#include "frontend/mlir/context.h"
#include "frontend/mlir/importer.h"
#include "frontend/mlir/pipeline.h"
#include "frontend/mlir/shardings.h"
#include "frontend/shapes/size_symbols.h"
#include "ir/error.h"

namespace parity::frontend::mlirio {

bool is_mlir_path(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".mlir") == 0;
}

namespace {

mlir::func::FuncOp pick_func(mlir::ModuleOp m, const Options& opt, const std::string& path) {
  mlir::func::FuncOp found;
  int n = 0;
  for (auto f : m.getOps<mlir::func::FuncOp>()) {
    if (f.isExternal()) continue;
    if (!opt.func.empty() && f.getSymName() != opt.func) continue;
    found = f;
    ++n;
  }
  if (n == 0)
    throw ir::InvalidInput(ir::Diag{
        path, "", "", "",
        opt.func.empty() ? "no func.func with a body" : "no func.func named '" + opt.func + "'"});
  if (n > 1)
    throw ir::InvalidInput(
        ir::Diag{path, "", "", "", "several functions: pick one with --func NAME"});
  return found;
}

mlir::func::FuncOp same_func(mlir::ModuleOp m, mlir::func::FuncOp like, const std::string& path) {
  for (auto f : m.getOps<mlir::func::FuncOp>())
    if (f.getSymName() == like.getSymName()) return f;
  Options o;
  return pick_func(m, o, path);
}

ir::Case build_case(mlir::func::FuncOp spec_f, mlir::func::FuncOp propagated_f,
                    mlir::func::FuncOp plan_f, const GridMesh& g, const std::string& spec_path,
                    const std::string& plan_path) {
  ir::Case c;
  Importer si(Mode::spec, ir::Mesh{}, spec_path);
  si.import_func(spec_f);
  ir::Spec spec;
  spec.name = spec_f.getSymName().str();
  spec.graph = std::move(si.graph);
  // A spec whose result reads the contents of a tensor.empty (a matmul
  // accumulating into one, a forgotten linalg.fill) is undefined: no plan can
  // be compared with it, and a difference would blame the plan.
  if (!si.undefs.empty()) {
    std::set<std::string> read(spec.graph.outputs.begin(), spec.graph.outputs.end());
    for (auto op = spec.graph.ops.rbegin(); op != spec.graph.ops.rend(); ++op) {
      bool used = false;
      for (const auto& r : op->results) used |= read.count(r) > 0;
      if (used) read.insert(op->operands.begin(), op->operands.end());
    }
    for (const auto& u : si.undefs)
      if (read.count(u.name))
        throw ir::InvalidInput(ir::Diag{spec_path, "", "", "",
                                        "line " + std::to_string(u.line) +
                                            ": the spec's results read the contents of a tensor.empty, which are "
                                            "undefined (initialize it, e.g. with linalg.fill)"});
  }

  Importer pi(Mode::plan, g.mesh, plan_path);
  pi.import_func(plan_f);
  FuncShardings fs = func_shardings(propagated_f, g);
  auto nargs = plan_f.getNumArguments(), nres = plan_f.getNumResults();
  if (nargs != spec_f.getNumArguments() || nres != spec_f.getNumResults() ||
      fs.args.size() != nargs || fs.results.size() != nres)
    throw ir::InvalidInput(ir::Diag{plan_path, "", "", "",
                                    "the plan function has " + std::to_string(nargs) +
                                        " arguments and " + std::to_string(nres) +
                                        " results, the spec " +
                                        std::to_string(spec_f.getNumArguments()) + " and " +
                                        std::to_string(spec_f.getNumResults())});
  ir::Plan plan;
  plan.name = plan_f.getSymName().str() + " (SPMD)";
  plan.mesh = g.mesh;
  ir::Program prog;
  prog.name = "spmd";
  prog.graph = std::move(pi.graph);
  plan.programs.push_back(std::move(prog));
  auto place = [&](const std::string& name, const std::vector<ir::Range>& r) {
    ir::Placement p;
    p.program = "spmd";
    p.value = name;
    p.spec_value = name;
    p.region = r;
    plan.placements.push_back(std::move(p));
  };
  for (size_t i = 0; i < nargs; ++i) place("arg" + std::to_string(i), fs.args[i]);
  for (size_t i = 0; i < nres; ++i) place("out" + std::to_string(i), fs.results[i]);
  // The plan's undefined tensors are spec inputs that no spec output reads.
  for (const auto& u : pi.undefs) {
    spec.graph.inputs.push_back(u.name);
    spec.graph.types[u.name] =
        ir::TensorType{ir::DType::f32, ir::Dims(u.spec_shape.begin(), u.spec_shape.end())};
  }
  for (auto& p : pi.undef_placements) plan.placements.push_back(std::move(p));
  c.spec = std::move(spec);
  c.plan = std::move(plan);
  // MLIR's sizes are numbers: as symbols they reduce like a protobuf case's.
  give_size_symbols(c);
  return c;
}

// Checked before MLIR's partitioner runs: it mishandles halos (see BUGS.md),
// and parity does not model them anyway.
void reject_unmodeled_shardings(mlir::ModuleOp m, const GridMesh& g) {
  std::string bad;
  m.walk([&](mlir::shard::ShardingOp s) {
    if (!bad.empty()) return;
    // MLIR's verifier does not bound split axes by the grid's rank, and its
    // partitioner indexes the grid's shape with them (a crash).
    const auto rank = static_cast<int64_t>(g.mesh.axes.size());
    for (auto axes : s.getSplitAxes().getAxes())
      for (int16_t a : axes.asArrayRef())
        if (a < 0 || a >= rank)
          throw ir::InvalidInput(ir::Diag{"", "", "", "",
                                          loc_str(s.getLoc()) + ": split_axes names grid axis " +
                                              std::to_string(a) + ", but @" + g.grid + " has " +
                                              std::to_string(rank) + " axes (0.." +
                                              std::to_string(rank - 1) + ")"});
    if (!s.getStaticHaloSizes().empty() || !s.getDynamicHaloSizes().empty())
      bad = loc_str(s.getLoc()) + ": unsupported sharding: halo sizes are not supported";
    else if (!s.getStaticShardedDimsOffsets().empty() || !s.getDynamicShardedDimsOffsets().empty())
      bad = loc_str(s.getLoc()) +
            ": unsupported sharding: explicit sharded_dims_offsets are not supported";
  });
  if (!bad.empty()) throw Unsupported(bad);
}

// MLIR 22 prints the sharding of a rank-0 tensor as `split_axes = []`, which
// its own parser rejects ("expected '['"); `[[]]`, no split axes either, is
// what it reads. Only text the parser would reject is changed.
std::string reparsable(std::string text) {
  const std::string bad = "split_axes = []", good = "split_axes = [[]]";
  for (size_t at = text.find(bad); at != std::string::npos; at = text.find(bad, at + good.size()))
    text.replace(at, bad.size(), good);
  return text;
}

std::string print_clean(mlir::ModuleOp m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m->print(os);
  os.flush();
  return s;
}

}  // namespace

Partitioned partition_and_import(const std::string& path, const Options& opt) {
  Session s;
  auto m = s.parse_file(path);
  // A module without a function is malformed before it is unsupported.
  auto f = pick_func(*m, opt, path);
  GridMesh g = grid_of(*m);
  reject_unmodeled_shardings(*m, g);
  PipelineOutput po = run_pipeline(s, *m, true);
  auto prop = s.parse_text(reparsable(po.propagated), path + " after sharding-propagation");
  auto part = s.parse_text(reparsable(po.partitioned), path + " after shard-partition");
  Partitioned out;
  out.partitioned = print_clean(*part);
  out.c = build_case(f, same_func(*prop, f, path), same_func(*part, f, path), g, path, path);
  return out;
}

ir::Case import_pair(const std::string& spec_path, const std::string& plan_path,
                     const Options& opt) {
  Session ss, ps;
  auto sm = ss.parse_file(spec_path);
  auto pm = ps.parse_file(plan_path);
  auto f = pick_func(*sm, opt, spec_path);
  same_func(*pm, f, plan_path);
  GridMesh g = grid_of(*sm);
  GridMesh pg = grid_of(*pm);
  if (pg.mesh.axes.size() != g.mesh.axes.size() || !(pg.mesh == g.mesh))
    throw ir::InvalidInput(
        ir::Diag{plan_path, "", "", "", "the plan's grid differs from the spec's"});
  pg.grid = g.grid;
  reject_unmodeled_shardings(*sm, g);
  reject_unmodeled_shardings(*pm, g);
  PipelineOutput po = run_pipeline(ss, *sm, false);
  auto prop = ss.parse_text(reparsable(po.propagated), spec_path + " after sharding-propagation");
  return build_case(f, same_func(*prop, f, spec_path), same_func(*pm, f, plan_path), g, spec_path,
                    plan_path);
}

}  // namespace parity::frontend::mlirio
