#include "corpus/builder.h"

#include <stdexcept>

namespace parity::corpus {

ir::Attr expr(const std::string& e) { return ir::DimExpr::parse(e); }

ir::Attr ints(const std::vector<std::string>& exprs) {
  ir::Dims d;
  for (const auto& e : exprs) d.push_back(ir::DimExpr::parse(e));
  return d;
}

ir::Attr strings(const std::vector<std::string>& v) { return ir::Strings(v); }

ir::Attr coords(const std::vector<std::pair<std::string, std::string>>& entries) {
  ir::Coords c;
  for (const auto& [axis, e] : entries)
    if (!c.emplace(axis, ir::DimExpr::parse(e)).second)
      throw std::logic_error("coords: axis '" + axis + "' given twice");
  return c;
}

ir::Attr groups(const ir::Groups& g) { return g; }

ir::TensorType type(ir::DType dtype, const Shape& shape) {
  ir::TensorType t;
  t.dtype = dtype;
  for (const auto& d : shape) t.shape.push_back(ir::DimExpr::parse(d));
  return t;
}

// ---------------------------------------------------------------------------
// GraphBuilder

GraphBuilder::GraphBuilder() : names_(std::make_shared<Names>()) {}

void GraphBuilder::claim(const std::string& name) {
  if (name.empty()) throw std::logic_error("empty value name");
  if (!names_->used.insert(name).second)
    throw std::logic_error("value '" + name + "' is defined twice");
}

std::string GraphBuilder::fresh(const std::string& kind) {
  // Skips names taken explicitly, so fresh names never collide.
  for (;;) {
    std::string n = kind + "_" + std::to_string(names_->next[kind]++);
    if (!names_->used.count(n)) return n;
  }
}

std::string GraphBuilder::input(const std::string& name, ir::DType dtype, const Shape& shape) {
  claim(name);
  g_.inputs.push_back(name);
  g_.types[name] = type(dtype, shape);
  return name;
}

std::string GraphBuilder::op(const std::string& kind, const std::vector<std::string>& operands,
                             const Attrs& attrs, const std::string& name) {
  return op_n(kind, operands, attrs, {name.empty() ? fresh(kind) : name})[0];
}

std::string GraphBuilder::let(const std::string& name, const std::string& kind,
                              const std::vector<std::string>& operands, const Attrs& attrs) {
  return op(kind, operands, attrs, name);
}

std::vector<std::string> GraphBuilder::op_n(const std::string& kind,
                                            const std::vector<std::string>& operands,
                                            const Attrs& attrs,
                                            const std::vector<std::string>& results) {
  ir::Op o;
  o.kind = kind;
  o.operands = operands;
  for (const auto& [name, v] : attrs)
    if (!o.attrs.emplace(name, v.value).second)
      throw std::logic_error(kind + ": attribute '" + name + "' given twice");
  for (const auto& r : results) claim(r);
  o.results = results;
  g_.ops.push_back(std::move(o));
  return results;
}

std::vector<std::string> GraphBuilder::loop(const std::string& count, const std::string& var,
                                            const std::vector<std::string>& init,
                                            const std::function<void(GraphBuilder&)>& body,
                                            const std::vector<std::string>& results) {
  GraphBuilder b(names_);
  body(b);
  std::vector<std::string> res = results;
  if (res.empty())
    for (size_t k = 0; k < init.size(); ++k) res.push_back(fresh("loop"));
  auto out = op_n("loop", init, {{"count", expr(count)}, {"var", var}}, res);
  g_.ops.back().regions.push_back(b.build());
  return out;
}

void GraphBuilder::declare(const std::string& value, ir::DType dtype, const Shape& shape) {
  g_.types[value] = type(dtype, shape);
}

void GraphBuilder::output(const std::string& value) { g_.outputs.push_back(value); }

// ---------------------------------------------------------------------------
// SpecBuilder

SpecBuilder::SpecBuilder(std::string name) { s_.name = std::move(name); }

SpecBuilder& SpecBuilder::dim(const std::string& name, int64_t value) {
  s_.dims[name] = value;
  return *this;
}

std::string SpecBuilder::input(const std::string& name, ir::DType dtype, const Shape& shape,
                               ir::Role role) {
  s_.roles[name] = role;
  return g_.input(name, dtype, shape);
}

void SpecBuilder::output(const std::string& value, ir::Role role) {
  s_.roles[value] = role;
  g_.output(value);
}

ir::Spec SpecBuilder::build() const {
  ir::Spec s = s_;
  s.graph = g_.build();
  return s;
}

// ---------------------------------------------------------------------------
// PlanBuilder

PlanBuilder::PlanBuilder(std::string name) { p_.name = std::move(name); }

PlanBuilder& PlanBuilder::axis(const std::string& name, int64_t size) {
  p_.mesh.axes.push_back(ir::MeshAxis{name, size});
  return *this;
}

PlanBuilder& PlanBuilder::dim(const std::string& name, int64_t value) {
  p_.dims[name] = value;
  return *this;
}

GraphBuilder& PlanBuilder::program(const std::string& name, const RankFix& ranks) {
  programs_.push_back(Prog{name, ranks, std::make_unique<GraphBuilder>()});
  return *programs_.back().graph;
}

namespace {
std::vector<ir::Range> ranges(const Region& region) {
  std::vector<ir::Range> out;
  for (const auto& [off, size] : region)
    out.push_back(ir::Range{ir::DimExpr::parse(off), ir::DimExpr::parse(size)});
  return out;
}
}  // namespace

PlanBuilder& PlanBuilder::region(const std::string& program, const std::string& value,
                                 const std::string& spec_value, const Region& region) {
  p_.placements.push_back(
      ir::Placement{program, value, spec_value, ir::PlacementKind::region, ranges(region), {}});
  return *this;
}

PlanBuilder& PlanBuilder::replica(const std::string& program, const std::string& value,
                                  const std::string& spec_value) {
  return region(program, value, spec_value, {});
}

PlanBuilder& PlanBuilder::partial(const std::string& program, const std::string& value,
                                  const std::string& spec_value,
                                  const std::vector<std::string>& axes, const Region& region) {
  p_.placements.push_back(
      ir::Placement{program, value, spec_value, ir::PlacementKind::partial, ranges(region), axes});
  return *this;
}

ir::Plan PlanBuilder::build() const {
  ir::Plan p = p_;
  for (const auto& prog : programs_) {
    ir::RankSel sel;
    sel.fixed = prog.ranks;
    p.programs.push_back(ir::Program{prog.name, sel, prog.graph->build()});
  }
  return p;
}

}  // namespace parity::corpus
