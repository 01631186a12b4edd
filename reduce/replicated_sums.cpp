#include "reduce/replicated_sums.h"

#include "reduce/distinct_sizes.h"

#include <set>
#include <vector>

namespace parity::reduce {
namespace {

using Axes = std::set<std::string>;
// A value's axes: those it may differ along, and those whose size its
// computation divides by (a count of `B/dp` ones, summed over dp, is `B` at
// every size of dp: the uniformity of ops in their sizes covers it). A size
// that grows with the axis (`dp` ones) or stays (`dp/dp`) does not: dp
// copies of it count dp or more.
struct Flow {
  Axes vary, named;
  bool grow(const Flow& o) {
    bool g = false;
    for (const auto& a : o.vary) g |= vary.insert(a).second;
    for (const auto& a : o.named) g |= named.insert(a).second;
    return g;
  }
};
using Env = std::map<std::string, Flow>;  // value -> its axes

// Axes whose coordinate an expression reads (`$tp` in `$tp*(V/tp)`), and
// those whose size it divides by, so that it shrinks as the axis grows (`tp`
// there).
void coords_of(const ir::DimExpr& e, const ir::Mesh& mesh, Axes& out, Axes* sizes = nullptr) {
  std::set<std::string> syms;
  e.symbols(syms);
  for (const auto& s : syms) {
    if (!s.empty() && s[0] == '$' && mesh.axis_index(s.substr(1))) out.insert(s.substr(1));
    if (sizes && mesh.axis_index(s) && direction(e, s) == -1) sizes->insert(s);
  }
}

struct Analysis {
  const ir::Case& c;
  const ir::Program& prog;
  Axes all;       // every axis of the mesh
  Axes selected;  // axes some program's rank selector reads: ranks along them may run other programs
  std::map<std::string, std::string>* flags = nullptr;  // set on the last pass only

  Flow operands_of(const ir::Op& op, const Env& env) const {
    Flow a;
    for (const auto& o : op.operands)
      if (auto it = env.find(o); it != env.end()) a.grow(it->second);
      else a.vary = all;  // not known here: may differ along anything
    return a;
  }

  void sum_over(const ir::Op& op, const Flow& in, const ir::Strings& group) {
    if (!flags) return;
    const ir::Attr* r = op.attr("reduce");
    const std::string kind = r && std::holds_alternative<std::string>(*r) ? std::get<std::string>(*r) : "sum";
    if (kind != "sum" && op.kind != "allgather") return;
    if (op.kind == "allgather" || op.kind == "all_to_all") {
      // Its result holds the value (a chunk of it) once per rank along the
      // axes: whatever reads it (a sum of gathered ones is the world size)
      // can count them.
      for (const auto& a : group)
        if (!in.vary.count(a) && !in.named.count(a) && !selected.count(a))
          flags->emplace(a, "an " + op.kind + " over " + a + " in program " + prog.name + " (" + op.label() +
                                ") gathers a value that is the same on every rank along it: as many copies as the "
                                "axis has ranks, a count the reduction would change");
      return;
    }
    for (const auto& a : group)
      if (!in.vary.count(a) && !in.named.count(a) && !selected.count(a))
        flags->emplace(a, "a sum over " + a + " in program " + prog.name + " (" + op.label() +
                              ") adds a value that is the same on every rank along it: as many copies as the "
                              "axis has ranks, a factor the reduction would change");
  }

  // Axes named by a value's declared type.
  void typed(const ir::Graph& g, const std::string& v, Flow& f) const {
    if (auto it = g.types.find(v); it != g.types.end())
      for (const auto& d : it->second.shape) coords_of(d, c.plan.mesh, f.vary, &f.named);
  }

  void graph(const ir::Graph& g, Env& env) {
    for (const auto& op : g.ops) {
      Flow in = operands_of(op, env);
      Flow out = in;
      if (op.kind == "loop" && op.regions.size() == 1) {
        // Carried values: their first value, then whatever each iteration
        // returns, until nothing grows (the sets only grow).
        const ir::Graph& body = op.regions[0];
        std::vector<Flow> carried(body.inputs.size());
        for (size_t i = 0; i < body.inputs.size(); ++i) {
          if (i < op.operands.size() && env.count(op.operands[i])) carried[i] = env.at(op.operands[i]);
          else carried[i].vary = all;
          typed(body, body.inputs[i], carried[i]);
        }
        std::map<std::string, std::string>* keep = flags;
        flags = nullptr;
        Env inner;
        for (int round = 0; round < 16; ++round) {
          inner = env;
          for (size_t i = 0; i < body.inputs.size(); ++i) inner[body.inputs[i]] = carried[i];
          graph(body, inner);
          bool grew = false;
          for (size_t i = 0; i < body.outputs.size() && i < carried.size(); ++i) {
            Flow o;
            if (inner.count(body.outputs[i])) o = inner.at(body.outputs[i]);
            else o.vary = all;
            grew |= carried[i].grow(o);
          }
          if (!grew) break;
        }
        flags = keep;
        inner = env;
        for (size_t i = 0; i < body.inputs.size(); ++i) inner[body.inputs[i]] = carried[i];
        graph(body, inner);  // once more, with the flags
        for (size_t i = 0; i < op.results.size(); ++i) {
          Flow r;
          if (i < body.outputs.size() && inner.count(body.outputs[i])) r = inner.at(body.outputs[i]);
          else r.vary = all;
          env[op.results[i]] = r;
        }
        continue;
      }
      for (const auto& [k, a] : op.attrs) {
        if (const auto* e = std::get_if<ir::DimExpr>(&a)) coords_of(*e, c.plan.mesh, out.vary, &out.named);
        if (const auto* d = std::get_if<ir::Dims>(&a))
          for (const auto& e : *d) coords_of(e, c.plan.mesh, out.vary, &out.named);
        if (std::holds_alternative<ir::Coords>(a)) out.vary = all;  // a peer: the value comes from another rank
      }
      // A count of `B/dp` ones is B/dp-sized through what sums, scales or
      // moves it; a max, a mean or a normalization over it is 1 at every size
      // of dp (`reduce_max(fill(1, [B/dp, H]))`), so dp copies of that count
      // dp: what it divides by is then only its own type's.
      static const std::set<std::string> normalizing = {"reduce_max", "reduce_mean", "softmax",   "log_softmax",
                                                        "topk_mask",  "rmsnorm",     "layernorm", "cross_entropy"};
      if (normalizing.count(op.kind)) out.named.clear();
      const ir::Attr* ax = op.attr("axes");
      const ir::Strings* group = ax ? std::get_if<ir::Strings>(ax) : nullptr;
      if (op.attr("groups")) {
        out.vary = all;  // explicit groups: members need not be along whole axes
      } else if (group && (op.kind == "allreduce" || op.kind == "allgather" || op.kind == "broadcast")) {
        if (op.kind == "allreduce" || op.kind == "allgather") sum_over(op, in, *group);
        for (const auto& a : *group) out.vary.erase(a);  // every member gets the same
      } else if (group && (op.kind == "reduce_scatter" || op.kind == "all_to_all")) {
        if (op.kind == "reduce_scatter" || op.kind == "all_to_all") sum_over(op, in, *group);
        out.vary.insert(group->begin(), group->end());  // member i gets chunk i
      } else if (op.kind == "recv") {
        out.vary = all;
      }
      for (const auto& r : op.results) {
        Flow f = out;
        typed(g, r, f);
        env[r] = f;
      }
    }
  }
};

}  // namespace

void replicated_sum_blockers(const ir::Case& c, std::map<std::string, std::string>& axes) {
  Axes all, selected;
  for (const auto& a : c.plan.mesh.axes) all.insert(a.name);
  // An axis a selector reads, where it leaves some coordinate out: a
  // selector that lists every coordinate of the axis (one program for all
  // 1024 dp ranks, written out) does not make the ranks along it differ.
  for (const auto& p : c.plan.programs)
    for (const auto& [a, v] : p.ranks.fixed) {
      const auto k = c.plan.mesh.axis_index(a);
      const std::set<int64_t> has(v.begin(), v.end());
      bool whole = k.has_value();
      for (int64_t i = 0; whole && i < c.plan.mesh.axes[*k].size; ++i) whole = has.count(i) > 0;
      if (!whole) selected.insert(a);
    }
  for (const auto& prog : c.plan.programs) {
    Analysis an{c, prog, all, selected, &axes};
    Env env;
    for (const auto& in : prog.graph.inputs) {
      Flow& a = env[in];
      bool placed = false;
      for (const auto& pl : c.plan.placements) {
        if (pl.program != prog.name || pl.value != in) continue;
        placed = true;
        for (const auto& r : pl.region) coords_of(r.offset, c.plan.mesh, a.vary);
        if (pl.kind == ir::PlacementKind::partial) a.vary.insert(pl.axes.begin(), pl.axes.end());
      }
      if (!placed) a.vary = all;
      an.typed(prog.graph, in, a);
    }
    an.graph(prog.graph, env);
  }
}

}  // namespace parity::reduce
