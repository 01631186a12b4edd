// Symbolic dimension expressions: `B`, `H/tp`, `2*KV*D`, `$tp*(V/tp)`.
// Names are dim symbols bound per spec/plan; `$axis` is a rank's coordinate on a
// mesh axis (and `$mb`, `$layer` loop indices), bound when a rank is instantiated.
// `/` is exact division: evaluation fails when the divisor does not divide.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace parity::ir {

using Bindings = std::map<std::string, int64_t>;

class DimExpr {
 public:
  enum class Kind { Const, Sym, Add, Sub, Mul, Div, Mod, Neg };

  DimExpr() : DimExpr(int64_t{0}) {}
  DimExpr(int64_t v);  // NOLINT: implicit from integer literals is convenient
  static DimExpr sym(const std::string& name);
  // Throws InvalidInput with the offending text on a syntax error.
  static DimExpr parse(const std::string& text);

  Kind kind() const { return node_->kind; }
  bool is_const() const { return node_->kind == Kind::Const; }
  int64_t const_value() const { return node_->value; }
  const std::string& name() const { return node_->name; }
  // Operands of Add/Sub/Mul/Div/Mod (both) and Neg (lhs only); reductions walk them.
  DimExpr lhs() const { return DimExpr(node_->lhs); }
  DimExpr rhs() const { return DimExpr(node_->rhs); }

  // Evaluates under `b`; throws InvalidInput naming the unbound symbol or the
  // inexact division.
  int64_t eval(const Bindings& b) const;
  bool try_eval(const Bindings& b, int64_t& out) const;
  // Every symbol bound in `b` replaced by its value, constant subexpressions
  // folded where they evaluate: under any bindings that agree with `b` on its
  // symbols, evaluates (or fails) exactly as this expression does. Stage keys
  // bind the dims once and look up only coordinates per instance.
  DimExpr bind(const Bindings& b) const;
  // Identity of the shared expression tree, to memoize per-expression work
  // (readers share the trees of equal texts).
  const void* id() const { return node_.get(); }
  void symbols(std::set<std::string>& out) const;
  // Degree in symbol `s`; a `/` or `%` with `s` inside counts as 99 (not
  // polynomial). Degree <= 1 in every coordinate makes an expression
  // multi-affine, so its extremes over a box of coordinates are at corners.
  int degree_in(const std::string& s) const;
  std::string str() const;

  friend DimExpr operator+(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator-(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator*(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator/(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator%(const DimExpr& a, const DimExpr& b);
  // Structural equality of the printed form; semantic equality needs bindings.
  friend bool operator==(const DimExpr& a, const DimExpr& b) { return a.str() == b.str(); }

 private:
  struct Node {
    Kind kind;
    int64_t value = 0;
    std::string name;
    std::shared_ptr<const Node> lhs, rhs;
  };
  explicit DimExpr(std::shared_ptr<const Node> n) : node_(std::move(n)) {}
  static DimExpr binary(Kind k, const DimExpr& a, const DimExpr& b);
  static bool eval_node(const Node& n, const Bindings& b, int64_t& out);
  static std::shared_ptr<const Node> bind_node(const std::shared_ptr<const Node>& n, const Bindings& b);
  std::shared_ptr<const Node> node_;
};

}  // namespace parity::ir
