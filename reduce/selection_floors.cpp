#include "reduce/selection_floors.h"

#include <functional>
#include <optional>
#include <set>
#include <variant>

#include "reduce/distinct_sizes.h"

namespace parity::reduce {

namespace {

bool holds_topk(const ir::Graph& g) {
  for (const auto& op : g.ops) {
    if (op.kind == "topk_mask") return true;
    for (const auto& r : op.regions)
      if (holds_topk(r)) return true;
  }
  return false;
}

void each_topk(const ir::Graph& g, const std::function<void(const ir::Op&)>& f) {
  for (const auto& op : g.ops) {
    if (op.kind == "topk_mask") f(op);
    for (const auto& r : op.regions) each_topk(r, f);
  }
}

}  // namespace

std::vector<SelectionSite> selection_sites(const ir::Case& c, const ir::Bindings& given,
                                           const ir::TypeMap* spec_types,
                                           const std::map<std::string, ir::TypeMap>* types) {
  std::vector<SelectionSite> out;
  auto scan = [&](const ir::Graph& g, const std::string& scope, const ir::Mesh* mesh,
                  const ir::TypeMap* known) {
    if (!holds_topk(g)) return;
    std::optional<ir::TypeMap> inferred;
    each_topk(g, [&](const ir::Op& op) {
      const ir::Attr* k = op.attr("k");
      if (op.operands.empty() || !k || !std::holds_alternative<ir::DimExpr>(*k)) return;
      const ir::TypeMap* tm = known;
      if (!tm || !tm->count(op.operands[0])) {
        if (!inferred) {
          ir::DiagList ignored;  // the case was validated; a failure here only loses a site
          inferred = ir::check_graph(g, given, mesh, ir::Diag{}, ignored);
        }
        tm = &*inferred;
      }
      auto t = tm->find(op.operands[0]);
      if (t == tm->end() || t->second.shape.empty()) return;
      const ir::DimExpr& extent = t->second.shape.back();
      const ir::DimExpr& kk = std::get<ir::DimExpr>(*k);
      int64_t e = 0, n = 0;
      if (extent.is_const() || !extent.try_eval(given, e) || !kk.try_eval(given, n) || e <= n)
        return;
      out.push_back({extent, kk, scope + " op " + op.label()});
    });
  };
  if (c.spec)
    scan(c.spec->graph, "spec", nullptr, spec_types && !spec_types->empty() ? spec_types : nullptr);
  for (const auto& prog : c.plan.programs) {
    const ir::TypeMap* known = nullptr;
    if (types)
      if (auto it = types->find(prog.name); it != types->end()) known = &it->second;
    scan(prog.graph, "program " + prog.name, &c.plan.mesh, known);
  }
  return out;
}

std::map<std::string, ir::TypeMap> selection_operand_types(
    const ir::Case& c, const std::map<std::string, ir::TypeMap>& types) {
  std::map<std::string, ir::TypeMap> out;
  for (const auto& prog : c.plan.programs) {
    auto it = types.find(prog.name);
    if (it == types.end()) continue;
    ir::TypeMap& kept =
        out[prog.name];  // present (maybe empty): a program without a top-k needs no inference
    each_topk(prog.graph, [&](const ir::Op& op) {
      if (op.operands.empty()) return;
      if (auto t = it->second.find(op.operands[0]); t != it->second.end())
        kept.emplace(t->first, t->second);
    });
  }
  return out;
}

bool selection_floors(const std::vector<SelectionSite>& sites, const ir::Bindings& now,
                      const std::map<std::string, std::pair<int64_t, int64_t>>& changed,
                      std::map<std::string, int64_t>& floors,
                      std::map<std::string, std::string>& floor_why) {
  for (const auto& s : sites) {
    int64_t e = 0, n = 0;
    if (!s.extent.try_eval(now, e) || !s.k.try_eval(now, n) || e > n) continue;
    const ir::DimExpr gap = s.extent - s.k;
    std::set<std::string> syms;
    s.extent.symbols(syms);
    for (const auto& x : syms) {
      if (!changed.count(x) || now.at(x) >= changed.at(x).first || direction(gap, x) <= 0) continue;
      floors[x] = now.at(x) + 1;
      floor_why[x] = "at " + x + " = " + std::to_string(now.at(x)) + ", " + s.where + " selects " +
                     std::to_string(n) + " of " + s.extent.str() + " = " + std::to_string(e) +
                     ": every entry would be selected, and a wrong selection would not show";
      return true;
    }
  }
  return false;
}

}  // namespace parity::reduce
