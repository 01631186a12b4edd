// Translation of one `func.func` into a parity graph. MLIR values become
// named parity values: tensors (and float scalars, as rank-0 tensors), index
// values (dim expressions, which may use `$axis` in a plan), and i1 conditions
// on the process index (tabulated over the mesh when a tensor needs them).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <llvm/ADT/DenseMap.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/Operation.h>
#include <mlir/IR/Value.h>

#include "ir/plan.h"

namespace parity::frontend::mlirio {

enum class Mode { spec, plan };

using Shape = std::vector<int64_t>;

struct TensorVal {
  std::string name;  // empty while `empty` is set and nothing has read it
  Shape shape;
  mlir::Operation* empty = nullptr;  // a tensor.empty: undefined contents
};
struct IndexVal {
  ir::DimExpr e;
};
struct CondVal {
  std::function<bool(const ir::Bindings&)> f;
};
using Val = std::variant<TensorVal, IndexVal, CondVal>;

// An input standing for the contents of a tensor.empty that something reads:
// a fresh spec input, so a result that depends on it cannot verify.
struct UndefInput {
  std::string name;
  Shape spec_shape;  // in a plan: [ranks, ...shape], one independent value per rank
  int line = 0;      // of the tensor.empty
};

class Importer {
 public:
  Importer(Mode mode, const ir::Mesh& mesh, std::string file);

  // Inputs arg0.. (function arguments), outputs out0.. (returned values).
  void import_func(mlir::func::FuncOp f);

  ir::Graph graph;
  std::vector<UndefInput> undefs;
  std::vector<ir::Placement> undef_placements;  // plan only, program "spmd"

  // ---- used by the per-dialect files ----
  Mode mode() const { return mode_; }
  const ir::Mesh& mesh() const { return mesh_; }
  [[noreturn]] void unsupported(mlir::Operation* op, const std::string& what) const;
  std::string emit(const std::string& kind, std::vector<std::string> operands, ir::AttrMap attrs, Shape shape);
  const Shape& shape_of(const std::string& name) const { return shapes_.at(name); }
  // A tensor operand by name, materializing undefined contents when read.
  std::string tensor(mlir::Value v, mlir::Operation* user);
  const Val& val(mlir::Value v, mlir::Operation* user) const;
  bool has(mlir::Value v) const { return vals_.count(v) != 0; }
  void set(mlir::Value v, Val x) { vals_[v] = std::move(x); }
  void set_tensor(mlir::Value v, const std::string& name) { vals_[v] = TensorVal{name, shapes_.at(name), nullptr}; }
  IndexVal index(mlir::Value v, mlir::Operation* user) const;
  Shape static_shape(mlir::Type t, mlir::Operation* op) const;

  // Shape helpers emitting parity ops (no op when nothing changes).
  std::string reshape(const std::string& x, const Shape& to);
  std::string transpose(const std::string& x, const std::vector<int64_t>& perm);
  std::string broadcast(const std::string& x, const Shape& to);
  std::string fill(double value, const Shape& shape);
  std::string slice(const std::string& x, int64_t dim, const ir::DimExpr& offset, int64_t size);
  std::string concat(const std::vector<std::string>& xs, int64_t dim);
  // A [1] tensor holding 1 on the ranks where `c` holds, 0 elsewhere.
  std::string cond_tensor(const CondVal& c);
  // Row-major linear index over `axes` of the mesh, as `$axis` expressions.
  ir::DimExpr linear_index(const std::vector<int64_t>& axes) const;
  std::string axis_name(int64_t k, mlir::Operation* op) const;

  void import_block(mlir::Block& b, std::vector<mlir::Value>* yielded);
  void import_op(mlir::Operation& op);

 private:
  bool import_shard(mlir::Operation& op);
  bool import_index(mlir::Operation& op);
  // Unsupported unless `e` is >= 0 (> 0) at every coordinate of the grid.
  void require_nonnegative(const ir::DimExpr& e, mlir::Operation* op, const std::string& what) const;
  void require_positive(const ir::DimExpr& e, mlir::Operation* op, const std::string& what) const;
  bool import_scf(mlir::Operation& op);
  std::string materialize_undef(TensorVal& t);

  Mode mode_;
  ir::Mesh mesh_;
  std::string file_;
  int line_ = 0;
  mlir::Operation* cur_op_ = nullptr;  // for messages from the shape helpers
  int counter_ = 0;
  llvm::DenseMap<mlir::Value, Val> vals_;
  std::map<std::string, Shape> shapes_;
};

// Per-dialect translators: each returns false when the op is not theirs.
bool import_linalg(Importer& im, mlir::Operation& op);
bool import_elementwise(Importer& im, mlir::Operation& op);  // arith / math on tensors and scalars
bool import_tosa(Importer& im, mlir::Operation& op);
bool import_tensor(Importer& im, mlir::Operation& op);

// parity kind of a unary or binary arith/math op, or "" when it has none.
std::string elementwise_kind(mlir::Operation& op);

}  // namespace parity::frontend::mlirio
