#include "reduce/walk.h"

#include <set>

#include "ir/op_registry.h"

namespace parity::reduce {

namespace {

void attr_exprs(const ir::Attr& a, const Where& w, const ExprFn& f) {
  if (auto* e = std::get_if<ir::DimExpr>(&a)) f(*e, w);
  if (auto* d = std::get_if<ir::Dims>(&a))
    for (const auto& e : *d) f(e, w);
  if (auto* c = std::get_if<ir::Coords>(&a))
    for (const auto& [axis, e] : *c) f(e, w);
}

void graph_exprs(const ir::Graph& g, const std::string& scope, const ExprFn& f) {
  for (const auto& [name, t] : g.types) {
    Where w{&scope, nullptr, nullptr, &name, nullptr};
    for (const auto& d : t.shape) f(d, w);
  }
  for (const auto& op : g.ops) {
    for (const auto& [k, a] : op.attrs) attr_exprs(a, Where{&scope, &op, &k, nullptr, nullptr}, f);
    for (const auto& r : op.regions) graph_exprs(r, scope, f);
  }
}

void map_attr(ir::Attr& a, const std::function<ir::DimExpr(const ir::DimExpr&)>& f) {
  if (auto* e = std::get_if<ir::DimExpr>(&a)) *e = f(*e);
  if (auto* d = std::get_if<ir::Dims>(&a))
    for (auto& e : *d) e = f(e);
  if (auto* c = std::get_if<ir::Coords>(&a))
    for (auto& [axis, e] : *c) e = f(e);
}

void map_graph(ir::Graph& g, const std::function<ir::DimExpr(const ir::DimExpr&)>& f) {
  for (auto& [name, t] : g.types)
    for (auto& d : t.shape) d = f(d);
  for (auto& op : g.ops) {
    for (auto& [k, a] : op.attrs) map_attr(a, f);
    for (auto& r : op.regions) map_graph(r, f);
  }
}

}  // namespace

std::string Where::str() const {
  if (placement)
    return "placement " + placement->program + ".%" + placement->value + " -> %" + placement->spec_value;
  std::string s = scope ? *scope : "";
  if (type) return s + " type of %" + *type;
  if (op) s += " op " + op->label();
  if (attr) s += " attribute " + *attr;
  return s;
}

void for_each_expr(const ir::Case& c, const ExprFn& f) {
  if (c.spec) graph_exprs(c.spec->graph, "spec", f);
  for (const auto& p : c.plan.programs) graph_exprs(p.graph, "program " + p.name, f);
  for (const auto& pl : c.plan.placements) {
    Where w{nullptr, nullptr, nullptr, nullptr, &pl};
    for (const auto& r : pl.region) {
      f(r.offset, w);
      f(r.size, w);
    }
  }
}

void map_plan_exprs(ir::Plan& p, const std::function<ir::DimExpr(const ir::DimExpr&)>& f) {
  for (auto& prog : p.programs) map_graph(prog.graph, f);
  for (auto& pl : p.placements)
    for (auto& r : pl.region) {
      r.offset = f(r.offset);
      r.size = f(r.size);
    }
}

bool has_coord(const ir::DimExpr& e) {
  std::set<std::string> s;
  e.symbols(s);
  for (const auto& x : s)
    if (!x.empty() && x[0] == '$') return true;
  return false;
}

bool float_attr(const ir::Op& op, const std::string& name) {
  const ir::OpDef* def = ir::OpRegistry::get().find(op.kind);
  if (def)
    for (const auto& s : def->attrs)
      if (s.name == name) return s.kind == ir::AttrKind::Float;
  return false;
}

int degree_in(const ir::DimExpr& e, const std::string& s) { return e.degree_in(s); }

void divisions(const ir::DimExpr& e, std::vector<ir::DimExpr>& out) {
  using K = ir::DimExpr::Kind;
  switch (e.kind()) {
    case K::Const:
    case K::Sym: return;
    case K::Neg: divisions(e.lhs(), out); return;
    case K::Div: out.push_back(e); [[fallthrough]];
    default:
      divisions(e.lhs(), out);
      divisions(e.rhs(), out);
  }
}

void remainders(const ir::DimExpr& e, std::vector<ir::DimExpr>& out) {
  using K = ir::DimExpr::Kind;
  if (e.kind() == K::Const || e.kind() == K::Sym) return;
  if (e.kind() == K::Mod || e.kind() == K::Sub) out.push_back(e);
  remainders(e.lhs(), out);
  if (e.kind() != K::Neg) remainders(e.rhs(), out);
}

void loop_count_symbols(const ir::Plan& p, const std::string& var, std::set<std::string>& out) {
  std::function<void(const ir::Graph&)> walk = [&](const ir::Graph& g) {
    for (const auto& op : g.ops) {
      const ir::Attr* n = op.kind == "loop" ? op.attr("count") : nullptr;
      const ir::Attr* v = n ? op.attr("var") : nullptr;
      if (n && v && std::holds_alternative<std::string>(*v) && std::get<std::string>(*v) == var &&
          std::holds_alternative<ir::DimExpr>(*n))
        std::get<ir::DimExpr>(*n).symbols(out);
      for (const auto& r : op.regions) walk(r);
    }
  };
  for (const auto& prog : p.programs) walk(prog.graph);
}

void walk_ops(const ir::Graph& g, const std::function<void(const ir::Op&)>& f) {
  for (const auto& op : g.ops) {
    f(op);
    for (const auto& r : op.regions) walk_ops(r, f);
  }
}

void walk_ops_mut(ir::Graph& g, const std::function<void(ir::Op&)>& f) {
  for (auto& op : g.ops) {
    f(op);
    for (auto& r : op.regions) walk_ops_mut(r, f);
  }
}

bool note_loop_count(const ir::Op& op, std::map<std::string, std::set<std::string>>& counts) {
  if (op.kind != "loop") return false;
  const ir::Attr* v = op.attr("var");
  const ir::Attr* n = op.attr("count");
  if (v && n && std::holds_alternative<std::string>(*v) && std::holds_alternative<ir::DimExpr>(*n))
    std::get<ir::DimExpr>(*n).symbols(counts[std::get<std::string>(*v)]);
  return true;
}

std::optional<double> float_literal(const ir::Op& op, const std::string& key, const ir::Attr& a) {
  if (const auto* x = std::get_if<double>(&a)) return *x;
  const auto* e = std::get_if<ir::DimExpr>(&a);
  if (!e || !e->is_const() || !float_attr(op, key)) return std::nullopt;
  return static_cast<double>(e->const_value());
}

std::set<std::string> output_box_sizes(const ir::Case& c, const std::string& output, const ir::TypeMap& types) {
  std::set<std::string> syms;
  if (auto it = types.find(output); it != types.end())
    for (const auto& e : it->second.shape) e.symbols(syms);
  for (const auto& pl : c.plan.placements)
    if (pl.spec_value == output)
      for (const auto& rg : pl.region) {
        rg.offset.symbols(syms);
        rg.size.symbols(syms);
      }
  std::set<std::string> sizes;
  for (const auto& x : syms) {
    if (x.empty() || x[0] != '$') {
      sizes.insert(x);
      continue;
    }
    const std::string var = x.substr(1);
    if (c.plan.mesh.axis_index(var)) sizes.insert(var);
    loop_count_symbols(c.plan, var, sizes);
  }
  return sizes;
}

}  // namespace parity::reduce
