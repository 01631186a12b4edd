#include "frontend/proto/factor.h"

#include <algorithm>
#include <functional>
#include <set>
#include <stdexcept>

namespace parity::frontend {

namespace {

// Every name the graph (and its regions) defines or reads.
void names_of(const ir::Graph& g, std::set<std::string>& out) {
  out.insert(g.inputs.begin(), g.inputs.end());
  for (const auto& op : g.ops) {
    out.insert(op.operands.begin(), op.operands.end());
    out.insert(op.results.begin(), op.results.end());
    for (const auto& r : op.regions) names_of(r, out);
  }
}

// Reads of `from` become reads of `to` in `ops` and their regions, up to a
// region's own definition of `from`.
void rename_uses(std::vector<ir::Op>& ops, const std::string& from, const std::string& to) {
  for (auto& op : ops) {
    std::replace(op.operands.begin(), op.operands.end(), from, to);
    for (auto& r : op.regions) {
      if (std::find(r.inputs.begin(), r.inputs.end(), from) != r.inputs.end())
        continue;  // shadowed
      rename_uses(r.ops, from, to);
      std::replace(r.outputs.begin(), r.outputs.end(), from, to);
    }
    if (std::find(op.results.begin(), op.results.end(), from) != op.results.end())
      return;  // redefined
  }
}

}  // namespace

void lower_factor(ir::Plan& p, size_t index, const ir::DimExpr& k, bool inverse) {
  ir::Placement& pl = p.placements.at(index);
  ir::Program* prog = nullptr;
  for (auto& q : p.programs)
    if (q.name == pl.program) prog = &q;
  if (!prog) throw std::invalid_argument("no program named '" + pl.program + "'");
  ir::Graph& g = prog->graph;
  const std::string v = pl.value;
  // Where v is defined: a program input (before every op) or a top-level op.
  size_t at = 0;
  const bool is_input = std::find(g.inputs.begin(), g.inputs.end(), v) != g.inputs.end();
  if (!is_input) {
    auto def = std::find_if(g.ops.begin(), g.ops.end(), [&](const ir::Op& op) {
      return std::find(op.results.begin(), op.results.end(), v) != op.results.end();
    });
    if (def == g.ops.end())
      throw std::invalid_argument("a placement with a factor needs '" + v +
                                  "' defined at the top level of program '" + pl.program +
                                  "' (not inside a loop body)");
    at = static_cast<size_t>(def - g.ops.begin()) + 1;
  }
  std::set<std::string> taken;
  names_of(g, taken);
  auto fresh = [&](const std::string& base) {
    std::string n = base;
    for (int i = 2; taken.count(n); ++i) n = base + "." + std::to_string(i);
    taken.insert(n);
    return n;
  };
  const std::string c = fresh(v + ".factor"), q = fresh(v + ".per_factor"),
                    b = fresh(v + ".by_factor");
  auto op = [&](const std::string& kind, std::vector<std::string> operands,
                const std::string& result, ir::AttrMap attrs) {
    ir::Op o;
    o.kind = kind;
    o.operands = std::move(operands);
    o.results = {result};
    o.attrs = std::move(attrs);
    o.line = pl.line, o.col = pl.col;  // written at the placement
    return o;
  };
  std::vector<ir::Op> added;
  added.push_back(op("fill", {}, c, {{"value", k}, {"shape", ir::Dims{}}}));
  if (inverse) {  // v = spec / k
    added.push_back(op("scale", {v}, q, {{"factor", k}}));
    added.push_back(op("div", {q, c}, b, {}));
  } else {  // v = k spec
    added.push_back(op("div", {v, c}, q, {}));
    added.push_back(op("scale", {q}, b, {{"factor", k}}));
  }
  std::vector<ir::Op> rest(g.ops.begin() + static_cast<std::ptrdiff_t>(at), g.ops.end());
  rename_uses(rest, v, b);
  g.ops.resize(at);
  g.ops.insert(g.ops.end(), added.begin(), added.end());
  g.ops.insert(g.ops.end(), rest.begin(), rest.end());
  pl.value = q;
}

}  // namespace parity::frontend
