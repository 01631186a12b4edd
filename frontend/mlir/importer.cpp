#include "frontend/mlir/importer.h"

#include <cmath>
#include <set>

#include <mlir/Dialect/Affine/IR/AffineOps.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Shard/IR/ShardOps.h>
#include <mlir/IR/BuiltinTypes.h>

#include "frontend/mlir/api.h"
#include "frontend/mlir/context.h"

namespace parity::frontend::mlirio {

namespace {
ir::Dims dims_of(const Shape& s) { return ir::Dims(s.begin(), s.end()); }
}  // namespace

Importer::Importer(Mode mode, const ir::Mesh& mesh, std::string file)
    : mode_(mode), mesh_(mesh), file_(std::move(file)) {}

void Importer::unsupported(mlir::Operation* op, const std::string& what) const {
  std::string where = op ? loc_str(op->getLoc()) : "";
  std::string name = op ? op->getName().getStringRef().str() : "?";
  // An op MLIR made (the body of a named op like `linalg.floor`, an
  // `affine.apply` of the partitioner) has no line of its own: name the
  // nearest enclosing op that has one, which is what the user wrote.
  std::string inside;
  for (mlir::Operation* p = op ? op->getParentOp() : nullptr; where.empty() && p; p = p->getParentOp()) {
    where = loc_str(p->getLoc());
    if (!where.empty()) inside = " (inside '" + p->getName().getStringRef().str() + "')";
  }
  if (where.empty()) where = file_;
  throw Unsupported(where + ": unsupported '" + name + "'" + inside + ": " + what);
}

std::string Importer::emit(const std::string& kind, std::vector<std::string> operands, ir::AttrMap attrs,
                           Shape shape) {
  ir::Op op;
  op.kind = kind;
  op.operands = std::move(operands);
  op.attrs = std::move(attrs);
  op.line = line_;
  std::string name = "t" + std::to_string(++counter_);
  op.results = {name};
  graph.ops.push_back(std::move(op));
  shapes_[name] = std::move(shape);
  return name;
}

const Val& Importer::val(mlir::Value v, mlir::Operation* user) const {
  auto it = vals_.find(v);
  if (it == vals_.end()) unsupported(user, "an operand is defined by something the importer did not translate");
  return it->second;
}

std::string Importer::tensor(mlir::Value v, mlir::Operation* user) {
  auto it = vals_.find(v);
  if (it == vals_.end()) unsupported(user, "an operand is defined by something the importer did not translate");
  auto* t = std::get_if<TensorVal>(&it->second);
  if (!t) unsupported(user, "expected a tensor or float operand, got an index or condition");
  if (t->name.empty()) t->name = materialize_undef(*t);
  return t->name;
}

IndexVal Importer::index(mlir::Value v, mlir::Operation* user) const {
  const Val& x = val(v, user);
  if (auto* i = std::get_if<IndexVal>(&x)) return *i;
  unsupported(user, "expected an index operand known as an expression of the process index");
}

Shape Importer::static_shape(mlir::Type t, mlir::Operation* op) const {
  if (mlir::isa<mlir::FloatType>(t)) return {};
  auto rt = mlir::dyn_cast<mlir::RankedTensorType>(t);
  if (!rt) unsupported(op, "operands must be ranked tensors or float scalars");
  if (!rt.hasStaticShape()) unsupported(op, "dynamic shapes are not supported");
  if (!mlir::isa<mlir::FloatType>(rt.getElementType()))
    unsupported(op, "only float element types are modeled (the semantics are over the reals)");
  for (int64_t d : rt.getShape())
    if (d == 0) unsupported(op, "a zero-size tensor: parity models every dim as at least 1");
  return Shape(rt.getShape().begin(), rt.getShape().end());
}

std::string Importer::axis_name(int64_t k, mlir::Operation* op) const {
  if (k < 0 || static_cast<size_t>(k) >= mesh_.axes.size()) unsupported(op, "grid axis out of range");
  return mesh_.axes[static_cast<size_t>(k)].name;
}

ir::DimExpr Importer::linear_index(const std::vector<int64_t>& axes) const {
  ir::DimExpr e(int64_t{0});
  bool first = true;
  for (auto a : axes) {
    auto s = ir::DimExpr::sym("$" + mesh_.axes.at(static_cast<size_t>(a)).name);
    e = first ? s : e * ir::DimExpr(mesh_.axes.at(static_cast<size_t>(a)).size) + s;
    first = false;
  }
  return e;
}

std::string Importer::materialize_undef(TensorVal& t) {
  int line = line_;
  if (t.empty) line_ = loc_line(t.empty->getLoc());
  std::string name = std::string(mode_ == Mode::spec ? "spec" : "plan") + "_undef" + std::to_string(undefs.size());
  std::string out = name;
  if (mode_ == Mode::spec) {
    graph.inputs.push_back(name);
    graph.types[name] = ir::TensorType{ir::DType::f32, dims_of(t.shape)};
    shapes_[name] = t.shape;
    undefs.push_back({name, t.shape, line_});
  } else {
    // Every rank gets its own row of a [ranks, ...] spec input: the contents
    // of an empty tensor may differ from rank to rank.
    Shape local{1};
    local.insert(local.end(), t.shape.begin(), t.shape.end());
    Shape global = local;
    global[0] = mesh_.num_ranks();
    graph.inputs.push_back(name);
    graph.types[name] = ir::TensorType{ir::DType::f32, dims_of(local)};
    shapes_[name] = local;
    undefs.push_back({name, global, line_});
    std::vector<int64_t> all;
    for (size_t k = 0; k < mesh_.axes.size(); ++k) all.push_back(static_cast<int64_t>(k));
    ir::Placement p;
    p.program = "spmd";
    p.value = name;
    p.spec_value = name;
    p.region.push_back({linear_index(all), 1});
    for (auto d : t.shape) p.region.push_back({0, d});
    undef_placements.push_back(p);
    out = reshape(name, t.shape);
  }
  line_ = line;
  return out;
}

std::string Importer::reshape(const std::string& x, const Shape& to) {
  if (shape_of(x) == to) return x;
  return emit("reshape", {x}, {{"shape", dims_of(to)}}, to);
}

std::string Importer::transpose(const std::string& x, const std::vector<int64_t>& perm) {
  bool id = true;
  for (size_t k = 0; k < perm.size(); ++k) id = id && perm[k] == static_cast<int64_t>(k);
  if (id) return x;
  Shape in = shape_of(x), out;
  for (auto p : perm) out.push_back(in.at(static_cast<size_t>(p)));
  return emit("transpose", {x}, {{"perm", ir::Dims(perm.begin(), perm.end())}}, out);
}

std::string Importer::broadcast(const std::string& x, const Shape& to) {
  if (shape_of(x) == to) return x;
  return emit("broadcast_to", {x}, {{"shape", dims_of(to)}}, to);
}

std::string Importer::fill(double value, const Shape& shape) {
  // parity's values are reals: an infinite neutral element (the -inf that
  // starts a max) has no counterpart.
  if (!std::isfinite(value)) unsupported(cur_op_, "a non-finite constant (" + std::to_string(value) + ")");
  return emit("fill", {}, {{"value", value}, {"shape", dims_of(shape)}}, shape);
}

std::string Importer::slice(const std::string& x, int64_t dim, const ir::DimExpr& offset, int64_t size) {
  Shape s = shape_of(x);
  if (offset.is_const() && offset.const_value() == 0 && s.at(static_cast<size_t>(dim)) == size) return x;
  s[static_cast<size_t>(dim)] = size;
  return emit("slice", {x}, {{"dim", ir::DimExpr(dim)}, {"offset", offset}, {"size", ir::DimExpr(size)}}, s);
}

std::string Importer::concat(const std::vector<std::string>& xs, int64_t dim) {
  if (xs.size() == 1) return xs[0];
  Shape s = shape_of(xs.at(0));
  s[static_cast<size_t>(dim)] = 0;
  for (const auto& x : xs) s[static_cast<size_t>(dim)] += shape_of(x).at(static_cast<size_t>(dim));
  return emit("concat", xs, {{"dim", ir::DimExpr(dim)}}, s);
}

std::string Importer::cond_tensor(const CondVal& c) {
  // The condition is a function of the rank: tabulate it over the mesh and
  // let each rank pick its own entry.
  int64_t R = mesh_.num_ranks();
  std::vector<bool> table;
  for (int64_t r = 0; r < R; ++r) {
    ir::Bindings b;
    ir::Coord co = mesh_.coord_of(r);
    for (size_t i = 0; i < mesh_.axes.size(); ++i) {
      b[mesh_.axes[i].name] = mesh_.axes[i].size;
      b["$" + mesh_.axes[i].name] = co[i];
    }
    table.push_back(c.f(b));
  }
  bool uniform = true;
  for (bool t : table) uniform = uniform && t == table[0];
  if (uniform) return fill(table[0] ? 1.0 : 0.0, {1});
  std::vector<std::string> runs;
  for (size_t i = 0; i < table.size();) {
    size_t j = i;
    while (j < table.size() && table[j] == table[i]) ++j;
    runs.push_back(fill(table[i] ? 1.0 : 0.0, {static_cast<int64_t>(j - i)}));
    i = j;
  }
  std::vector<int64_t> all;
  for (size_t k = 0; k < mesh_.axes.size(); ++k) all.push_back(static_cast<int64_t>(k));
  return slice(concat(runs, 0), 0, linear_index(all), 1);
}

void Importer::import_func(mlir::func::FuncOp f) {
  if (f.getBody().empty()) unsupported(f, "a function declaration has no body");
  if (!f.getBody().hasOneBlock()) unsupported(f, "functions with several blocks");
  mlir::Block& b = f.getBody().front();
  line_ = loc_line(f.getLoc());
  for (unsigned i = 0; i < b.getNumArguments(); ++i) {
    mlir::Value a = b.getArgument(i);
    Shape s = static_shape(a.getType(), f);
    std::string name = "arg" + std::to_string(i);
    graph.inputs.push_back(name);
    graph.types[name] = ir::TensorType{ir::DType::f32, dims_of(s)};
    shapes_[name] = s;
    set(a, TensorVal{name, s, nullptr});
  }
  std::vector<mlir::Value> results;
  import_block(b, &results);
  for (size_t i = 0; i < results.size(); ++i) {
    mlir::Operation* ret = b.getTerminator();
    line_ = loc_line(ret->getLoc());
    std::string x = tensor(results[i], ret);
    std::string name = "out" + std::to_string(i);
    ir::Op op;
    op.kind = "identity";
    op.operands = {x};
    op.results = {name};
    op.line = line_;
    graph.ops.push_back(std::move(op));
    shapes_[name] = shape_of(x);
    graph.outputs.push_back(name);
  }
}

void Importer::import_block(mlir::Block& b, std::vector<mlir::Value>* yielded) {
  for (mlir::Operation& op : b) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
      if (!mlir::isa<mlir::func::ReturnOp, mlir::scf::YieldOp>(op)) unsupported(&op, "terminator");
      if (yielded) yielded->assign(op.getOperands().begin(), op.getOperands().end());
      continue;
    }
    import_op(op);
  }
}

void Importer::import_op(mlir::Operation& op) {
  line_ = loc_line(op.getLoc());
  cur_op_ = &op;
  if (import_shard(op) || import_index(op) || import_scf(op) || import_linalg(*this, op) ||
      import_tensor(*this, op) || import_tosa(*this, op) || import_elementwise(*this, op))
    return;
  unsupported(&op, "no translation to parity ops");
}

bool Importer::import_shard(mlir::Operation& op) {
  namespace sh = mlir::shard;
  if (op.getDialect() == nullptr || op.getDialect()->getNamespace() != "shard") return false;
  if (mlir::isa<sh::ShardingOp>(op)) return true;  // read through shard.shard
  if (auto s = mlir::dyn_cast<sh::ShardOp>(op)) {
    // An annotation: the value itself (the shardings matter for placements only).
    set(s.getResult(), val(s.getSrc(), &op));
    return true;
  }
  if (mode_ == Mode::spec) unsupported(&op, "only shard.sharding and shard.shard belong in a spec");
  auto axes_of = [&](llvm::ArrayRef<int16_t> a) {
    std::vector<int64_t> v(a.begin(), a.end());
    if (v.empty())
      for (size_t k = 0; k < mesh_.axes.size(); ++k) v.push_back(static_cast<int64_t>(k));
    return v;
  };
  auto names = [&](llvm::ArrayRef<int16_t> a) {
    ir::Strings s;
    for (auto k : a) s.push_back(axis_name(k, &op));
    return s;
  };
  auto group = [&](llvm::ArrayRef<int16_t> a) {
    int64_t n = 1;
    for (auto k : a) n *= mesh_.axes.at(static_cast<size_t>(k)).size;
    return n;
  };
  if (auto p = mlir::dyn_cast<sh::ProcessMultiIndexOp>(op)) {
    auto axes = axes_of(p.getAxes());
    for (size_t i = 0; i < p.getNumResults(); ++i)
      set(op.getResult(static_cast<unsigned>(i)), IndexVal{ir::DimExpr::sym("$" + axis_name(axes.at(i), &op))});
    return true;
  }
  if (auto p = mlir::dyn_cast<sh::ProcessLinearIndexOp>(op)) {
    set(p.getResult(), IndexVal{linear_index(axes_of({}))});
    return true;
  }
  if (auto g = mlir::dyn_cast<sh::GridShapeOp>(op)) {
    auto axes = axes_of(g.getAxes());
    for (size_t i = 0; i < g.getNumResults(); ++i)
      set(op.getResult(static_cast<unsigned>(i)), IndexVal{ir::DimExpr(mesh_.axes.at(static_cast<size_t>(axes.at(i))).size)});
    return true;
  }
  mlir::Value in = op.getNumOperands() ? op.getOperand(0) : mlir::Value();
  auto result_shape = [&] { return static_shape(op.getResult(0).getType(), &op); };
  // by_min: min over the group is -max(-x) (parity's collectives reduce by sum, max or avg).
  auto simple = [&](const std::string& kind, llvm::ArrayRef<int16_t> axes, ir::AttrMap attrs,
                    bool by_min = false) {
    std::string x = tensor(in, &op);
    if (axes.empty() || group(axes) == 1) {
      set_tensor(op.getResult(0), emit("identity", {x}, {}, result_shape()));
      return true;
    }
    attrs["axes"] = names(axes);
    if (!by_min) {
      set_tensor(op.getResult(0), emit(kind, {x}, std::move(attrs), result_shape()));
      return true;
    }
    attrs["reduce"] = std::string("max");
    const std::string m = emit(kind, {emit("neg", {x}, {}, shape_of(x))}, std::move(attrs), result_shape());
    set_tensor(op.getResult(0), emit("neg", {m}, {}, result_shape()));
    return true;
  };
  auto reduce_name = [&](sh::ReductionKind k) -> std::string {
    if (k == sh::ReductionKind::Sum) return "sum";
    if (k == sh::ReductionKind::Max) return "max";
    if (k == sh::ReductionKind::Average) return "avg";
    unsupported(&op, "reduction kind " + sh::stringifyReductionKind(k).str());
  };
  if (auto c = mlir::dyn_cast<sh::AllReduceOp>(op); c && c.getReduction() == sh::ReductionKind::Min)
    return simple("allreduce", c.getGridAxes(), {}, true);
  if (auto c = mlir::dyn_cast<sh::ReduceScatterOp>(op); c && c.getReduction() == sh::ReductionKind::Min)
    return simple("reduce_scatter", c.getGridAxes(), {{"dim", ir::DimExpr(c.getScatterAxis().getSExtValue())}}, true);
  if (auto c = mlir::dyn_cast<sh::AllReduceOp>(op))
    return simple("allreduce", c.getGridAxes(), {{"reduce", reduce_name(c.getReduction())}});
  if (auto c = mlir::dyn_cast<sh::AllGatherOp>(op))
    return simple("allgather", c.getGridAxes(), {{"dim", ir::DimExpr(c.getGatherAxis().getSExtValue())}});
  if (auto c = mlir::dyn_cast<sh::AllToAllOp>(op))
    return simple("all_to_all", c.getGridAxes(),
                  {{"split_dim", ir::DimExpr(c.getSplitAxis().getSExtValue())},
                   {"concat_dim", ir::DimExpr(c.getConcatAxis().getSExtValue())}});
  if (auto c = mlir::dyn_cast<sh::ReduceScatterOp>(op))
    return simple("reduce_scatter", c.getGridAxes(),
                  {{"dim", ir::DimExpr(c.getScatterAxis().getSExtValue())},
                   {"reduce", reduce_name(c.getReduction())}});
  if (auto c = mlir::dyn_cast<sh::BroadcastOp>(op)) {
    auto root = c.getRoot();
    if (!c.getRootDynamic().empty()) unsupported(&op, "a dynamic root");
    int64_t lin = 0;
    for (size_t i = 0; i < root.size(); ++i)
      lin = lin * mesh_.axes.at(static_cast<size_t>(c.getGridAxes()[i])).size + root[i];
    return simple("broadcast", c.getGridAxes(), {{"root", ir::DimExpr(lin)}});
  }
  if (auto c = mlir::dyn_cast<sh::AllSliceOp>(op)) {
    // Every rank keeps its own chunk: a slice at the rank's position in the group.
    std::string x = tensor(in, &op);
    int64_t d = c.getSliceAxis().getSExtValue();
    Shape out = result_shape();
    std::vector<int64_t> axes(c.getGridAxes().begin(), c.getGridAxes().end());
    int64_t n = group(c.getGridAxes());
    if (d < 0 || static_cast<size_t>(d) >= out.size()) unsupported(&op, "slice axis out of range");
    if (shape_of(x)[static_cast<size_t>(d)] != out[static_cast<size_t>(d)] * n)
      unsupported(&op, "uneven all_slice");
    int64_t size = out[static_cast<size_t>(d)];
    set_tensor(op.getResult(0), slice(x, d, linear_index(axes) * ir::DimExpr(size), size));
    return true;
  }
  if (mlir::isa<sh::UpdateHaloOp>(op)) unsupported(&op, "halos are not supported");
  unsupported(&op, "this shard op is not modeled");
}

// Every coordinate on the grid axes `e` reads, as bindings of `$axis`.
template <class F>
static void for_each_coordinate(const ir::Mesh& m, const ir::DimExpr& e, F&& f) {
  std::set<std::string> syms;
  e.symbols(syms);
  std::vector<const ir::MeshAxis*> axes;
  for (const auto& ax : m.axes)
    if (syms.count("$" + ax.name)) axes.push_back(&ax);
  ir::Bindings b;
  std::vector<int64_t> c(axes.size(), 0);
  for (;;) {
    for (size_t k = 0; k < axes.size(); ++k) b["$" + axes[k]->name] = c[k];
    f(b);
    size_t k = axes.size();
    while (k > 0 && ++c[k - 1] == axes[k - 1]->size) c[--k] = 0;
    if (k == 0) return;
  }
}

void Importer::require_nonnegative(const ir::DimExpr& e, mlir::Operation* op, const std::string& what) const {
  for_each_coordinate(mesh_, e, [&](const ir::Bindings& b) {
    int64_t v = 0;
    if (!e.try_eval(b, v))
      unsupported(op, what + " (" + e.str() + ") cannot be evaluated on every rank");
    if (v < 0) {
      std::string at;
      for (const auto& [k, x] : b) at += (at.empty() ? "" : ", ") + k.substr(1) + "=" + std::to_string(x);
      unsupported(op, what + " (" + e.str() + ") is " + std::to_string(v) + " at " + at +
                          "; signed and unsigned index arithmetic of negative values is not modeled");
    }
  });
}

void Importer::require_positive(const ir::DimExpr& e, mlir::Operation* op, const std::string& what) const {
  for_each_coordinate(mesh_, e, [&](const ir::Bindings& b) {
    int64_t v = 0;
    if (!e.try_eval(b, v) || v <= 0)
      unsupported(op, what + " (" + e.str() + ") must be a positive index on every rank");
  });
}

bool Importer::import_index(mlir::Operation& op) {
  namespace ar = mlir::arith;
  if (op.getNumResults() != 1) return false;
  mlir::Type t = op.getResult(0).getType();
  if (!mlir::isa<mlir::IndexType, mlir::IntegerType>(t)) return false;
  bool i1 = t.isInteger(1);
  mlir::Value r = op.getResult(0);
  if (auto c = mlir::dyn_cast<ar::ConstantOp>(op)) {
    auto ia = mlir::dyn_cast<mlir::IntegerAttr>(c.getValue());
    if (!ia) unsupported(&op, "constant");
    // Past 64 bits (an i128 2^64) getSExtValue would keep the low bits only.
    if (!i1 && ia.getValue().getSignificantBits() > 64) unsupported(&op, "an integer constant past 64 bits");
    int64_t v = i1 ? (ia.getValue().isZero() ? 0 : 1) : ia.getValue().getSExtValue();
    if (i1) set(r, CondVal{[v](const ir::Bindings&) { return v != 0; }});
    else set(r, IndexVal{ir::DimExpr(v)});
    return true;
  }
  // Integers are modeled as unbounded: a value that does not fit the width
  // of its type (a wrap-around) is not, nor is a negative value read unsigned.
  auto fits = [&](const Val& v) {
    const auto* iv = std::get_if<IndexVal>(&v);
    auto it = mlir::dyn_cast<mlir::IntegerType>(t);
    // An i1 integer keeps one bit, 1 read signed is -1: `index_cast` of a
    // process index to i1 is not the index (ranks 0 and 2 both give 0).
    // Only comparisons and constants make conditions.
    if (iv && it && it.getWidth() == 1)
      unsupported(&op, "an integer of type i1 computed from an index (" + iv->e.str() +
                           "); only comparisons, constants and their and/or/xor are modeled as conditions");
    // 64-bit values (and index) are modeled exactly while they fit: one that
    // overflows on some rank wraps in MLIR, which is not modeled.
    if (iv && (!it || it.getWidth() >= 64))
      for_each_coordinate(mesh_, iv->e, [&](const ir::Bindings& b) {
        int64_t x = 0;
        if (!iv->e.try_eval(b, x))
          unsupported(&op, "the value " + iv->e.str() +
                               " overflows 64 bits (or divides inexactly) on some rank; integer wrap-around is not "
                               "modeled");
      });
    if (!iv || !it || it.getWidth() <= 1 || it.getWidth() >= 64) return;
    const int64_t lim = int64_t{1} << (it.getWidth() - 1);
    for_each_coordinate(mesh_, iv->e, [&](const ir::Bindings& b) {
      int64_t x = 0;
      if (iv->e.try_eval(b, x) && (x < -lim || x >= lim))
        unsupported(&op, "the value " + iv->e.str() + " is " + std::to_string(x) + " on some rank, outside i" +
                             std::to_string(it.getWidth()) + "; integer wrap-around is not modeled");
    });
  };
  // `affine.apply` (the partitioner's linear process index over several grid
  // axes, `d0 * 2 + d1`): its expression over the operands. Affine `mod` and
  // `floordiv` by a positive divisor are the floor forms parity's `%` and
  // `(a - a % b) / b` are, for dividends of either sign.
  if (auto ap = mlir::dyn_cast<mlir::affine::AffineApplyOp>(op)) {
    mlir::AffineMap m = ap.getAffineMap();
    if (m.getNumResults() != 1) unsupported(&op, "an affine map with " + std::to_string(m.getNumResults()) + " results");
    std::vector<ir::DimExpr> args;
    for (mlir::Value v : ap.getMapOperands()) args.push_back(index(v, &op).e);
    std::function<ir::DimExpr(mlir::AffineExpr)> walk = [&](mlir::AffineExpr e) -> ir::DimExpr {
      if (auto d = mlir::dyn_cast<mlir::AffineDimExpr>(e)) return args.at(d.getPosition());
      if (auto y = mlir::dyn_cast<mlir::AffineSymbolExpr>(e)) return args.at(m.getNumDims() + y.getPosition());
      if (auto c = mlir::dyn_cast<mlir::AffineConstantExpr>(e)) return ir::DimExpr(c.getValue());
      auto b = mlir::cast<mlir::AffineBinaryOpExpr>(e);
      ir::DimExpr x = walk(b.getLHS()), y = walk(b.getRHS());
      switch (e.getKind()) {
        case mlir::AffineExprKind::Add: return x + y;
        case mlir::AffineExprKind::Mul: return x * y;
        case mlir::AffineExprKind::Mod:
          require_positive(y, &op, "the divisor");
          return x % y;
        case mlir::AffineExprKind::FloorDiv:
          require_positive(y, &op, "the divisor");
          return (x - x % y) / y;
        case mlir::AffineExprKind::CeilDiv: {
          require_positive(y, &op, "the divisor");
          ir::DimExpr z = x + y - ir::DimExpr(1);
          return (z - z % y) / y;
        }
        default: unsupported(&op, "an affine expression of an unknown kind");
      }
    };
    Val out{IndexVal{walk(m.getResult(0))}};
    fits(out);
    set(r, out);
    return true;
  }
  if (mlir::isa<ar::IndexCastOp, ar::IndexCastUIOp, ar::ExtSIOp, ar::ExtUIOp, ar::TruncIOp>(op)) {
    const Val& v = val(op.getOperand(0), &op);
    if (mlir::isa<ar::IndexCastUIOp, ar::ExtUIOp>(op))
      if (const auto* iv = std::get_if<IndexVal>(&v)) require_nonnegative(iv->e, &op, "the operand of an unsigned cast");
    fits(v);
    set(r, v);
    return true;
  }
  if (auto c = mlir::dyn_cast<ar::CmpIOp>(op)) {
    ir::DimExpr a = index(c.getLhs(), &op).e, b = index(c.getRhs(), &op).e;
    auto pred = c.getPredicate();
    // An unsigned comparison reads a negative index as a huge number.
    if (pred == ar::CmpIPredicate::ult || pred == ar::CmpIPredicate::ule ||
        pred == ar::CmpIPredicate::ugt || pred == ar::CmpIPredicate::uge) {
      require_nonnegative(a, &op, "the left operand of an unsigned comparison");
      require_nonnegative(b, &op, "the right operand of an unsigned comparison");
    }
    set(r, CondVal{[a, b, pred](const ir::Bindings& bd) {
          int64_t x = a.eval(bd), y = b.eval(bd);
          switch (pred) {
            case ar::CmpIPredicate::eq: return x == y;
            case ar::CmpIPredicate::ne: return x != y;
            case ar::CmpIPredicate::slt: case ar::CmpIPredicate::ult: return x < y;
            case ar::CmpIPredicate::sle: case ar::CmpIPredicate::ule: return x <= y;
            case ar::CmpIPredicate::sgt: case ar::CmpIPredicate::ugt: return x > y;
            case ar::CmpIPredicate::sge: case ar::CmpIPredicate::uge: return x >= y;
          }
          return false;
        }});
    return true;
  }
  if (i1 && mlir::isa<ar::AndIOp, ar::OrIOp, ar::XOrIOp>(op)) {
    auto cv = [&](mlir::Value v) {
      if (auto* c = std::get_if<CondVal>(&val(v, &op))) return c->f;
      unsupported(&op, "expected a condition");
    };
    auto f = cv(op.getOperand(0)), g = cv(op.getOperand(1));
    if (mlir::isa<ar::AndIOp>(op)) set(r, CondVal{[f, g](const ir::Bindings& b) { return f(b) && g(b); }});
    else if (mlir::isa<ar::OrIOp>(op)) set(r, CondVal{[f, g](const ir::Bindings& b) { return f(b) || g(b); }});
    else set(r, CondVal{[f, g](const ir::Bindings& b) { return f(b) != g(b); }});
    return true;
  }
  if (op.getNumOperands() == 2 &&
      mlir::isa<ar::AddIOp, ar::SubIOp, ar::MulIOp, ar::DivUIOp, ar::DivSIOp, ar::FloorDivSIOp, ar::RemUIOp,
                ar::RemSIOp>(op)) {
    ir::DimExpr a = index(op.getOperand(0), &op).e, b = index(op.getOperand(1), &op).e;
    // For a non-negative dividend and a positive divisor, truncating, floor
    // and the exact division of (a - a mod b) by b agree, and so do the
    // signed and unsigned remainders. A negative dividend (`idx - 1` on
    // rank 0) is where they part: `remsi(-1, 2)` is -1, parity's `%` 1.
    if (!mlir::isa<ar::AddIOp, ar::SubIOp, ar::MulIOp>(op)) {
      require_nonnegative(a, &op, "the dividend");
      require_positive(b, &op, "the divisor");
    }
    Val out = mlir::isa<ar::AddIOp>(op)                   ? Val{IndexVal{a + b}}
              : mlir::isa<ar::SubIOp>(op)                 ? Val{IndexVal{a - b}}
              : mlir::isa<ar::MulIOp>(op)                 ? Val{IndexVal{a * b}}
              : mlir::isa<ar::RemUIOp, ar::RemSIOp>(op) ? Val{IndexVal{a % b}}
                                                          : Val{IndexVal{(a - a % b) / b}};
    fits(out);
    set(r, out);
    return true;
  }
  return false;
}

bool Importer::import_scf(mlir::Operation& op) {
  auto f = mlir::dyn_cast<mlir::scf::IfOp>(op);
  if (!f) {
    if (op.getDialect() && op.getDialect()->getNamespace() == "scf") unsupported(&op, "only scf.if is modeled");
    return false;
  }
  const auto* cv = std::get_if<CondVal>(&val(f.getCondition(), &op));
  if (!cv) unsupported(&op, "the condition must be a comparison of process indices");
  // Both branches are evaluated and the rank's condition picks one; a
  // collective in a branch would be reached by some ranks only.
  bool comm = false;
  f->walk([&](mlir::Operation* o) {
    if (o != f.getOperation() && o->getDialect() && o->getDialect()->getNamespace() == "shard" &&
        !mlir::isa<mlir::shard::ShardingOp, mlir::shard::ShardOp, mlir::shard::ProcessMultiIndexOp,
                   mlir::shard::ProcessLinearIndexOp, mlir::shard::GridShapeOp>(o))
      comm = true;
  });
  if (comm) unsupported(&op, "communication inside a branch");
  CondVal cond = *cv;
  std::vector<mlir::Value> tv, ev;
  import_block(f.getThenRegion().front(), &tv);
  if (!f.getElseRegion().empty()) import_block(f.getElseRegion().front(), &ev);
  if (f.getNumResults() == 0) return true;
  std::string c = cond_tensor(cond);
  for (unsigned i = 0; i < f.getNumResults(); ++i) {
    mlir::Value res = f.getResult(i);
    if (mlir::isa<mlir::IndexType, mlir::IntegerType>(res.getType())) {
      auto a = index(tv.at(i), &op), b = index(ev.at(i), &op);
      if (a.e.str() != b.e.str()) unsupported(&op, "index results that differ between the branches");
      set(res, a);
      continue;
    }
    Shape s = static_shape(res.getType(), &op);
    std::string a = tensor(tv.at(i), &op), b = tensor(ev.at(i), &op);
    set_tensor(res, emit("where", {s.empty() ? reshape(c, {}) : c, a, b}, {}, s));
  }
  return true;
}

}  // namespace parity::frontend::mlirio
