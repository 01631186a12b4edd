#include "reduce/walk.h"

namespace parity::reduce {

namespace {

void attr_exprs(const ir::Attr& a, const std::string& where, const ExprFn& f) {
  if (auto* e = std::get_if<ir::DimExpr>(&a)) f(*e, where);
  if (auto* d = std::get_if<ir::Dims>(&a))
    for (const auto& e : *d) f(e, where);
  if (auto* c = std::get_if<ir::Coords>(&a))
    for (const auto& [axis, e] : *c) f(e, where);
}

void graph_exprs(const ir::Graph& g, const std::string& where, const ExprFn& f) {
  for (const auto& [name, t] : g.types)
    for (const auto& d : t.shape) f(d, where + " type of %" + name);
  for (const auto& op : g.ops) {
    std::string at = where + " op " + op.label();
    for (const auto& [k, a] : op.attrs) attr_exprs(a, at + " attribute " + k, f);
    for (const auto& r : op.regions) graph_exprs(r, where, f);
  }
}

void graph_floats(const ir::Graph& g, const std::string& where, const FloatFn& f) {
  for (const auto& op : g.ops) {
    for (const auto& [k, a] : op.attrs)
      if (auto* x = std::get_if<double>(&a)) f(*x, where + " op " + op.label() + " attribute " + k);
    for (const auto& r : op.regions) graph_floats(r, where, f);
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

void for_each_expr(const ir::Case& c, const ExprFn& f) {
  if (c.spec) graph_exprs(c.spec->graph, "spec", f);
  for (const auto& p : c.plan.programs) graph_exprs(p.graph, "program " + p.name, f);
  for (const auto& pl : c.plan.placements)
    for (const auto& r : pl.region) {
      std::string at = "placement " + pl.program + ".%" + pl.value + " -> %" + pl.spec_value;
      f(r.offset, at);
      f(r.size, at);
    }
}

void for_each_float(const ir::Case& c, const FloatFn& f) {
  if (c.spec) graph_floats(c.spec->graph, "spec", f);
  for (const auto& p : c.plan.programs) graph_floats(p.graph, "program " + p.name, f);
}

void map_plan_exprs(ir::Plan& p, const std::function<ir::DimExpr(const ir::DimExpr&)>& f) {
  for (auto& prog : p.programs) map_graph(prog.graph, f);
  for (auto& pl : p.placements)
    for (auto& r : pl.region) {
      r.offset = f(r.offset);
      r.size = f(r.size);
    }
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

}  // namespace parity::reduce
