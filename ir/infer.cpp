#include "ir/op_registry.h"
#include "ir/validate.h"

#include <cmath>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <algorithm>

namespace parity::ir {

namespace {

struct Checker {
  Checker(const Bindings& b, const Mesh* mesh, const Diag& where, DiagList& out) : b(b), mesh(mesh), where(where), out(out) {}
  const Bindings& b;
  const Mesh* mesh;
  const Diag& where;
  DiagList& out;
  TypeMap all;  // every value of the program, for placements and messages
  std::map<std::string, int64_t> loop_vars;
  size_t errors = 0;
  std::unordered_set<const void*> exact;  // coordinate-free divisions already found exact

  // Every `/` and `%` of an integer attribute must evaluate (exact, nonzero
  // divisor) on every rank: an offset such as `$tp*(V/H)` is read by no
  // shape rule, and would otherwise fail only when a rank runs it.
  void check_divisions(const ShapeCtx& ctx, const DimExpr& e) {
    using K = DimExpr::Kind;
    if (e.kind() == K::Const || e.kind() == K::Sym) return;
    if (e.kind() == K::Neg) return check_divisions(ctx, e.lhs());
    check_divisions(ctx, e.lhs());
    check_divisions(ctx, e.rhs());
    if (e.kind() != K::Div && e.kind() != K::Mod) return;
    if (exact.count(e.id())) return;
    std::set<std::string> syms;
    e.symbols(syms);
    const bool coords = std::any_of(syms.begin(), syms.end(), [](const std::string& x) { return !x.empty() && x[0] == '$'; });
    ctx.for_each_coord(e, [&](const Bindings& at) {
      int64_t v;
      if (e.try_eval(at, v)) return;
      std::string where;
      for (const auto& [k, x] : at)
        if (!k.empty() && k[0] == '$') where += " " + k + "=" + std::to_string(x);
      ctx.fail("'" + e.str() + "' is not an exact division" + (where.empty() ? "" : " at" + where));
    });
    if (!coords) exact.insert(e.id());
  }

  // `check` names the rule for tools (docs/cli.md, "Diagnostics").
  void report(const Op* op, const char* check, const std::string& msg) {
    Diag d = where;
    if (op) {
      d.op = op->label();
      if (op->line > 0) d.line = op->line, d.col = op->col;
    }
    d.check = check;
    d.message = msg;
    out.add(d);
    ++errors;
  }

  bool define(const Op* op, const std::string& name, TensorType t) {
    if (name.empty()) {
      report(op, "value-name", "empty value name");
      return false;
    }
    // Element counts and flat indices are int64: a tensor of 2^61 x 4
    // elements would wrap and be indexed out of bounds when run. Dims that
    // read a coordinate or loop index are bounded by the same expression at
    // each instance; those not evaluable here are checked where they are.
    {
      int64_t n = 1;
      bool wraps = false;
      for (const auto& d : t.shape) {
        int64_t x = 0;
        if (!d.try_eval(b, x) || x < 1) continue;
        if (n > (int64_t{1} << 62) / x) wraps = true;
        else n *= x;
      }
      if (wraps) {
        report(op, "element-count", "value '" + name + "' of type " + t.str() +
                       " has more than 2^62 elements (its element count would overflow)");
        return false;
      }
    }
    auto [it, fresh] = all.emplace(name, std::move(t));
    if (!fresh) {
      report(op, "ssa", "value '" + name + "' is defined twice (values are SSA: one definition per program)");
      return false;
    }
    scope.emplace(it->first, &it->second);
    if (!body_defs.empty()) body_defs.back().push_back(it->first);
    return true;
  }

  // The declared type of `name`, innermost region first.
  const TensorType* declared_type(const std::string& name) const {
    for (auto d = declared.rbegin(); d != declared.rend(); ++d)
      if (auto it = (*d)->find(name); it != (*d)->end()) return &it->second;
    return nullptr;
  }

  static std::string allowed_attrs(const OpDef& d) {
    std::string s;
    for (const auto& a : d.attrs) s += (s.empty() ? "" : ", ") + a.name;
    return s.empty() ? "none" : s;
  }

  void check_op(const Op& op) {
    size_t before = errors;
    check_op_inner(op);
    if (errors != before)
      for (const auto& r : op.results) poisoned.insert(r);
  }

  void check_op_inner(const Op& op) {
    const OpDef* def = OpRegistry::get().find(op.kind);
    if (!def) {
      report(&op, "unknown-op", "unknown op '" + op.kind + "' (see `parity inspect --ops` for the known ones)");
      return;
    }
    int n = static_cast<int>(op.operands.size());
    if (n < def->min_operands || (def->max_operands >= 0 && n > def->max_operands)) {
      std::string want = def->max_operands < 0 ? "at least " + std::to_string(def->min_operands)
                         : def->min_operands == def->max_operands ? std::to_string(def->min_operands)
                         : std::to_string(def->min_operands) + ".." + std::to_string(def->max_operands);
      report(&op, "operand-count", "takes " + want + " operands, got " + std::to_string(n));
      return;
    }
    std::vector<TensorType> in;
    for (const auto& v : op.operands) {
      auto it = scope.find(v);
      if (it == scope.end() && poisoned.count(v)) {  // already reported at its definition
        for (const auto& r : op.results) poisoned.insert(r);
        return;
      }
      if (it == scope.end()) {
        report(&op, "dangling-value", "operand '" + v + "' is not defined before use (dangling value)");
        return;
      }
      in.push_back(*it->second);
    }
    for (const auto& [name, a] : op.attrs) {
      const AttrSpec* spec = nullptr;
      for (const auto& s : def->attrs)
        if (s.name == name) spec = &s;
      if (!spec) {
        report(&op, "attribute", "unknown attribute '" + name + "' (allowed: " + allowed_attrs(*def) + ")");
        return;
      }
      bool ok = attr_kind(a) == spec->kind || (spec->kind == AttrKind::Float && attr_kind(a) == AttrKind::Int);
      if (!ok) {
        report(&op, "attribute", "attribute '" + name + "' must be " + attr_kind_name(spec->kind) + ", got " + attr_kind_name(attr_kind(a)));
        return;
      }
      // inf or nan as a literal: no real number a step could compute with.
      if (const double* f = std::get_if<double>(&a); f && !std::isfinite(*f)) {
        report(&op, "attribute", "attribute '" + name + "' is " + std::to_string(*f) + "; a float attribute must be a finite number");
        return;
      }
    }
    for (const auto& s : def->attrs)
      if (s.required && !op.attr(s.name)) {
        report(&op, "attribute", "missing attribute '" + s.name + "' (" + attr_kind_name(s.kind) + ")");
        return;
      }
    if (static_cast<int>(op.regions.size()) != def->regions) {
      report(&op, "regions", "has " + std::to_string(op.regions.size()) + " regions, expected " + std::to_string(def->regions));
      return;
    }
    if ((def->collective || def->p2p) && !mesh) {
      report(&op, "collective-in-spec", "communication op in a spec (a spec runs on one device)");
      return;
    }
    std::vector<TensorType> res;
    try {
      // Only a loop reads its operand types again (for its body).
      ShapeCtx ctx(op, def->regions == 1 ? in : std::move(in), b, mesh, loop_vars);
      for (const auto& [name, a] : op.attrs)
        if (const auto* e = std::get_if<DimExpr>(&a)) check_divisions(ctx, *e);
      res = def->rule(ctx);
    } catch (const InvalidInput& e) {
      report(&op, "shape-rule", std::string("shape rule violated: ") + e.what());
      return;
    }
    if (res.size() != op.results.size()) {
      report(&op, "result-count", "produces " + std::to_string(res.size()) + " results, " + std::to_string(op.results.size()) + " named");
      return;
    }
    if (def->regions == 1 && !check_loop_body(op, in)) return;
    for (size_t k = 0; k < res.size(); ++k) {
      if (const TensorType* d = declared_type(op.results[k]); d && !same_type(*d, res[k])) {
        report(&op, "result-type", "result '" + op.results[k] + "' is declared " + d->str() + " but the shape rule gives " + res[k].str());
        return;
      }
      define(&op, op.results[k], std::move(res[k]));
    }
  }

  bool same_type(const TensorType& a, const TensorType& b) {
    if (a.dtype != b.dtype || a.rank() != b.rank()) return false;
    for (size_t k = 0; k < a.rank(); ++k) {
      int64_t x, y;
      if (!a.shape[k].try_eval(this->b, x) || !b.shape[k].try_eval(this->b, y) || x != y) return false;
    }
    return true;
  }

  bool check_loop_body(const Op& op, const std::vector<TensorType>& carried) {
    const Graph& body = op.regions[0];
    if (body.inputs.size() != carried.size() || body.outputs.size() != carried.size()) {
      report(&op, "loop", "loop body must take and return the " + std::to_string(carried.size()) + " carried values, got " +
                      std::to_string(body.inputs.size()) + " inputs and " + std::to_string(body.outputs.size()) + " outputs");
      return false;
    }
    std::string var = std::get<std::string>(*op.attr("var"));
    int64_t count = 0;
    std::get<DimExpr>(*op.attr("count")).try_eval(b, count);
    if (loop_vars.count(var) || (mesh && mesh->axis_index(var))) {
      report(&op, "loop", "loop variable '" + var + "' shadows an enclosing loop or a mesh axis");
      return false;
    }
    loop_vars[var] = count;
    // The body sees the enclosing values; its own leave scope when it ends
    // (SSA: a body value never shadows an outer one, `define` rejects that).
    body_defs.emplace_back();
    declared.push_back(&body.types);
    size_t before = errors;
    for (size_t k = 0; k < carried.size(); ++k) {
      auto it = body.types.find(body.inputs[k]);
      if (it != body.types.end() && !same_type(it->second, carried[k])) {
        report(&op, "loop", "loop body input '" + body.inputs[k] + "' is declared " + it->second.str() + " but carries " + carried[k].str());
      }
      define(&op, body.inputs[k], carried[k]);
    }
    for (const auto& inner : body.ops) check_op(inner);
    declared.pop_back();
    for (size_t k = 0; k < body.outputs.size() && errors == before; ++k) {
      auto it = scope.find(body.outputs[k]);
      if (it == scope.end()) report(&op, "loop", "loop body output '" + body.outputs[k] + "' is not defined");
      else if (!same_type(*it->second, carried[k]))
        report(&op, "loop", "loop body output '" + body.outputs[k] + "' has type " + it->second->str() + ", the carried value " + carried[k].str());
    }
    for (std::string_view n : body_defs.back()) scope.erase(n);
    body_defs.pop_back();
    loop_vars.erase(var);
    return errors == before;
  }

  std::vector<const TypeMap*> declared;  // declared types of the enclosing regions, outermost first
  // Values visible here (pointing into `all`) and, per enclosing loop body, the
  // names it defined.
  std::unordered_map<std::string_view, const TensorType*> scope;
  std::vector<std::vector<std::string_view>> body_defs;
  std::set<std::string> poisoned;  // results of ops that failed to check
};

}  // namespace

TypeMap check_graph(const Graph& g, const Bindings& b, const Mesh* mesh, const Diag& where, DiagList& out) {
  Checker c(b, mesh, where, out);
  c.declared.push_back(&g.types);
  for (const auto& in : g.inputs) {
    auto it = g.types.find(in);
    if (it == g.types.end()) {
      c.report(nullptr, "input-type", "input '" + in + "' has no declared type");
      continue;
    }
    for (size_t k = 0; k < it->second.shape.size(); ++k) {
      const auto& d = it->second.shape[k];
      int64_t v;
      if (!d.try_eval(b, v)) {
        try {
          d.eval(b);
        } catch (const std::exception& e) {  // an unbound symbol, a division, an overflow
          c.report(nullptr, "input-type", "input '" + in + "' of type " + it->second.str() + ", dim " + std::to_string(k) + ": " +
                                e.what());
        }
      } else if (v < 1) {
        // Zero-size tensors are not supported (their ops and placements
        // would need empty-region rules of their own).
        c.report(nullptr, "input-type", "input '" + in + "' of type " + it->second.str() + ": dim " + std::to_string(k) + " is " +
                              (d.is_const() ? std::to_string(v) : d.str() + " = " + std::to_string(v)) +
                              "; every dim must be at least 1 (zero-size tensors are not supported)");
      }
    }
    c.define(nullptr, in, it->second);
  }
  if (c.errors) return std::move(c.all);
  for (const auto& op : g.ops) c.check_op(op);
  for (const auto& o : g.outputs)
    if (!c.scope.count(o) && !c.poisoned.count(o)) c.report(nullptr, "dangling-value", "output '" + o + "' is not defined");
  return std::move(c.all);
}

}  // namespace parity::ir
