#include "reduce/replicated_sums.h"

#include <set>
#include <vector>

namespace parity::reduce {
namespace {

using Axes = std::set<std::string>;     // the axes a value may differ along
using Env = std::map<std::string, Axes>;  // value -> its axes

// Axes whose coordinate an expression reads (`$tp` in `$tp*(V/tp)`).
void coords_of(const ir::DimExpr& e, const ir::Mesh& mesh, Axes& out) {
  std::set<std::string> syms;
  e.symbols(syms);
  for (const auto& s : syms)
    if (!s.empty() && s[0] == '$' && mesh.axis_index(s.substr(1))) out.insert(s.substr(1));
}

struct Analysis {
  const ir::Case& c;
  const ir::Program& prog;
  Axes all;       // every axis of the mesh
  Axes selected;  // axes some program's rank selector reads: ranks along them may run other programs
  std::map<std::string, std::string>* flags = nullptr;  // set on the last pass only

  Axes operands_of(const ir::Op& op, const Env& env) const {
    Axes a;
    for (const auto& o : op.operands)
      if (auto it = env.find(o); it != env.end()) a.insert(it->second.begin(), it->second.end());
      else a = all;  // not known here: may differ along anything
    return a;
  }

  void sum_over(const ir::Op& op, const Axes& in, const ir::Strings& group) {
    if (!flags) return;
    const ir::Attr* r = op.attr("reduce");
    const std::string kind = r && std::holds_alternative<std::string>(*r) ? std::get<std::string>(*r) : "sum";
    if (kind != "sum") return;
    for (const auto& a : group)
      if (!in.count(a) && !selected.count(a))
        flags->emplace(a, "a sum over " + a + " in program " + prog.name + " (" + op.label() +
                              ") adds a value that is the same on every rank along it: as many copies as the "
                              "axis has ranks, a factor the reduction would change");
  }

  void graph(const ir::Graph& g, Env& env) {
    for (const auto& op : g.ops) {
      Axes in = operands_of(op, env);
      Axes out = in;
      if (op.kind == "loop" && op.regions.size() == 1) {
        // Carried values: their first value, then whatever each iteration
        // returns, until nothing grows (the sets only grow).
        const ir::Graph& body = op.regions[0];
        std::vector<Axes> carried(body.inputs.size());
        for (size_t i = 0; i < body.inputs.size() && i < op.operands.size(); ++i)
          if (auto it = env.find(op.operands[i]); it != env.end()) carried[i] = it->second;
          else carried[i] = all;
        std::map<std::string, std::string>* keep = flags;
        flags = nullptr;
        Env inner;
        for (int round = 0; round < 16; ++round) {
          inner = env;
          for (size_t i = 0; i < body.inputs.size(); ++i) inner[body.inputs[i]] = carried[i];
          graph(body, inner);
          bool grew = false;
          for (size_t i = 0; i < body.outputs.size() && i < carried.size(); ++i) {
            const Axes& o = inner.count(body.outputs[i]) ? inner[body.outputs[i]] : all;
            for (const auto& a : o) grew |= carried[i].insert(a).second;
          }
          if (!grew) break;
        }
        flags = keep;
        inner = env;
        for (size_t i = 0; i < body.inputs.size(); ++i) inner[body.inputs[i]] = carried[i];
        graph(body, inner);  // once more, with the flags
        for (size_t i = 0; i < op.results.size(); ++i)
          env[op.results[i]] = i < body.outputs.size() && inner.count(body.outputs[i]) ? inner[body.outputs[i]] : all;
        continue;
      }
      for (const auto& [k, a] : op.attrs) {
        if (const auto* e = std::get_if<ir::DimExpr>(&a)) coords_of(*e, c.plan.mesh, out);
        if (const auto* d = std::get_if<ir::Dims>(&a))
          for (const auto& e : *d) coords_of(e, c.plan.mesh, out);
        if (const auto* cs = std::get_if<ir::Coords>(&a)) {
          (void)cs;
          out = all;  // a peer: the value comes from another rank
        }
      }
      const ir::Attr* ax = op.attr("axes");
      const ir::Strings* group = ax ? std::get_if<ir::Strings>(ax) : nullptr;
      if (op.attr("groups")) {
        out = all;  // explicit groups: members need not be along whole axes
      } else if (group && (op.kind == "allreduce" || op.kind == "allgather" || op.kind == "broadcast")) {
        if (op.kind == "allreduce") sum_over(op, in, *group);
        for (const auto& a : *group) out.erase(a);  // every member gets the same
      } else if (group && (op.kind == "reduce_scatter" || op.kind == "all_to_all")) {
        if (op.kind == "reduce_scatter") sum_over(op, in, *group);
        out.insert(group->begin(), group->end());  // member i gets chunk i
      } else if (op.kind == "recv") {
        out = all;
      }
      for (const auto& r : op.results) env[r] = out;
    }
  }
};

}  // namespace

void replicated_sum_blockers(const ir::Case& c, std::map<std::string, std::string>& axes) {
  Axes all, selected;
  for (const auto& a : c.plan.mesh.axes) all.insert(a.name);
  for (const auto& p : c.plan.programs)
    for (const auto& [a, v] : p.ranks.fixed) selected.insert(a);
  for (const auto& prog : c.plan.programs) {
    Analysis an{c, prog, all, selected, &axes};
    Env env;
    for (const auto& in : prog.graph.inputs) {
      Axes& a = env[in];
      bool placed = false;
      for (const auto& pl : c.plan.placements) {
        if (pl.program != prog.name || pl.value != in) continue;
        placed = true;
        for (const auto& r : pl.region) coords_of(r.offset, c.plan.mesh, a);
        if (pl.kind == ir::PlacementKind::partial) a.insert(pl.axes.begin(), pl.axes.end());
      }
      if (!placed) a = all;
    }
    an.graph(prog.graph, env);
  }
}

}  // namespace parity::reduce
