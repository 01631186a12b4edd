// The op registry: each op declares its operands, attributes and shape rule in
// one place (ops_*.cpp), next to a one-line description of its semantics.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/mesh.h"

namespace parity::ir {

// What a shape rule sees: operand types, the op's attributes, the dim bindings,
// and for plan programs the mesh and the ranges of loop variables.
class ShapeCtx {
 public:
  ShapeCtx(const Op& op, std::vector<TensorType> in, const Bindings& b, const Mesh* mesh,
           const std::map<std::string, int64_t>& loop_vars)
      : op(op), in(std::move(in)), b_(b), mesh_(mesh), loop_vars_(loop_vars) {}

  const Op& op;
  std::vector<TensorType> in;
  const Mesh* mesh() const { return mesh_; }
  const Bindings& bindings() const { return b_; }

  [[noreturn]] void fail(const std::string& msg) const;
  int64_t eval(const DimExpr& e) const;  // fails naming the expression
  bool same(const DimExpr& a, const DimExpr& b) const;
  void expect_same(const DimExpr& a, const DimExpr& b, const std::string& what) const;

  // Attribute accessors: fail with the attribute's name and expected kind.
  bool has(const std::string& name) const { return op.attr(name) != nullptr; }
  double f(const std::string& name, double dflt) const;
  double f(const std::string& name) const;
  std::string s(const std::string& name) const;
  std::string s(const std::string& name, const std::string& dflt) const;
  DimExpr i(const std::string& name) const;
  int64_t ival(const std::string& name, int64_t dflt) const;  // evaluated, rank-independent
  Dims ints(const std::string& name) const;
  Strings strs(const std::string& name) const;

  // A (possibly negative) dim index into operand `k`, normalized.
  size_t axis(int64_t d, size_t k) const;
  // Calls `check` with every binding of the `$` symbols of `e` (mesh coordinates,
  // loop indices), so a rank-dependent offset is checked for every rank.
  void for_each_coord(const DimExpr& e, const std::function<void(const Bindings&)>& check) const;
  // Group size of a collective (`axes` or explicit `groups` attribute).
  int64_t group_size() const;

 private:
  const Bindings& b_;
  const Mesh* mesh_;
  const std::map<std::string, int64_t>& loop_vars_;
};

using ShapeRule = std::function<std::vector<TensorType>(const ShapeCtx&)>;

struct AttrSpec {
  std::string name;
  AttrKind kind;
  bool required = false;
  // A number the op's value is an affine function of (a coefficient or an
  // addend, never an exponent, a position or a threshold): a literal there
  // may be read as an indeterminate (docs/soundness.md, "Literals read as indeterminates").
  bool scalar = false;
  // A size or a position along a tensor dim (a shape, an offset, a slice's
  // size, a depth): a static number there may be written as a dim expression
  // (frontend/shapes/size_symbols.h).
  bool extent = false;
};

// Whether attribute `attr` of op kind `kind` is declared `scalar`.
bool is_scalar_attr(const std::string& kind, const std::string& attr);
// Whether attribute `attr` of op kind `kind` is declared `extent`.
bool is_extent_attr(const std::string& kind, const std::string& attr);

struct OpDef {
  std::string name;
  int min_operands = 0;
  int max_operands = 0;  // -1: variadic
  std::vector<AttrSpec> attrs;
  ShapeRule rule;
  std::string doc;
  bool collective = false;  // communicates; needs a plan program
  bool p2p = false;
  int regions = 0;
  // Element i of the result depends on element i of each operand only (after
  // broadcast): a box of the result is computed from the same box of each.
  bool elementwise = false;
  // The result's elements are operand elements, moved or repeated (reshape,
  // slice, concat, cast, ...): ids and values pass through unchanged.
  bool moves = false;
  // Linear in each operand on its own: a sum over ranks of an operand is a
  // sum of the results (add, scale, reshape, reduce_sum, matmul, ...).
  bool linear = false;
  // Sums over dims of its operands (matmul, reduce_sum): where the mesh
  // splits a summed dim, each rank's result is a share of the sum.
  bool contracts = false;
};

class OpRegistry {
 public:
  static const OpRegistry& get();
  const OpDef* find(const std::string& name) const;
  std::vector<const OpDef*> all() const;
  void add(OpDef d);

 private:
  std::map<std::string, OpDef> defs_;
};

void register_elementwise_ops(OpRegistry& r);
void register_linalg_ops(OpRegistry& r);
void register_shape_ops(OpRegistry& r);
void register_nn_ops(OpRegistry& r);
void register_collective_ops(OpRegistry& r);

// Broadcast of two shapes, numpy style (size-1 dims stretch).
std::vector<DimExpr> broadcast_shapes(const ShapeCtx& c, const std::vector<DimExpr>& a, const std::vector<DimExpr>& b);

}  // namespace parity::ir
