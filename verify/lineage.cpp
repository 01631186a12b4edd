#include "verify/lineage.h"

#include <algorithm>
#include <deque>
#include <map>

#include "reduce/stages.h"

namespace parity::verify {

LineageStep lineage_step(const reduce::StageGraph& g, int32_t id, const std::function<std::string(int64_t)>& rank_name) {
  const reduce::Node& n = g.nodes()[static_cast<size_t>(id)];
  const ir::Plan& p = g.kase().plan;
  LineageStep s;
  s.rank = n.rank;
  s.rank_str = rank_name(n.rank);
  s.program = p.program_of(n.rank) ? p.program_of(n.rank)->name : "";
  s.value = *n.name;
  for (uint32_t pl : n.placements) {
    const ir::Placement& P = p.placements[pl];
    s.placed += (s.placed.empty() ? "" : ", ") + P.spec_value;
    if (P.kind == ir::PlacementKind::partial) {
      s.placed += " (partial, summed over";
      for (const auto& a : P.axes) s.placed += " " + a;
      s.placed += ")";
    }
  }
  if (n.instr < 0) {
    s.op = "input";
  } else {
    const ir::Instr& ins = g.instr(n);
    s.iter = ins.iter;
    s.op = ins.op->kind;
    if (n.coll >= 0) {
      if (const ir::Attr* a = ins.op->attr("axes"))
        s.op += " over " + ir::attr_str(*a);
      else if (ins.op->attr("groups"))
        s.op += " over explicit groups";
    }
    if (ins.op->line) s.op += " (line " + std::to_string(ins.op->line) + ")";
    if (!ins.op->origin.empty()) s.op += " at " + ins.op->origin;
  }
  return s;
}

std::vector<LineageStep> lineage(const reduce::StageGraph& g, int64_t rank, const std::string& value,
                                 const std::string& iter, size_t max_steps,
                                 const std::function<std::string(int64_t)>& rank_name,
                                 std::vector<int32_t>* node_ids) {
  const auto& nodes = g.nodes();
  auto is_bind = [&](const reduce::Node& n) { return n.instr >= 0 && g.instr(n).kind == ir::Instr::bind; };
  int32_t start = -1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const reduce::Node& n = nodes[i];
    if (n.rank != rank || *n.name != value || is_bind(n)) continue;
    if (n.instr >= 0 && g.instr(n).iter != iter) continue;
    start = static_cast<int32_t>(i);
    break;
  }
  std::vector<LineageStep> out;
  if (start < 0) return out;
  // Loop-carried copies (bind) are looked through: they are not computations.
  auto resolve = [&](int32_t id) {
    for (int k = 0; k < 1000 && is_bind(nodes[static_cast<size_t>(id)]) && !nodes[static_cast<size_t>(id)].deps.empty(); ++k)
      id = nodes[static_cast<size_t>(id)].deps[0];
    return id;
  };
  std::map<int32_t, size_t> index;  // node -> step
  std::deque<std::pair<int32_t, int>> todo{{start, 0}};
  index[start] = 0;
  out.emplace_back();
  while (!todo.empty()) {
    auto [id, depth] = todo.front();
    todo.pop_front();
    const reduce::Node& n = nodes[static_cast<size_t>(id)];
    LineageStep& s = out[index[id]];
    s = lineage_step(g, id, rank_name);
    s.depth = depth;
    // Placed instances other than the start are the boundary: assumed equal
    // to their spec region here, proved on their own.
    if (depth > 0 && !n.placements.empty()) continue;
    for (int32_t d : n.deps) {
      d = resolve(d);
      auto [it, fresh] = index.try_emplace(d, out.size());
      if (fresh) {
        if (out.size() >= max_steps) {
          index.erase(it);
          continue;
        }
        out.emplace_back();
        todo.emplace_back(d, depth + 1);
      }
      auto& from = out[index[id]].from;
      if (std::find(from.begin(), from.end(), it->second) == from.end()) from.push_back(it->second);
    }
  }
  if (node_ids) {
    node_ids->assign(out.size(), -1);
    for (const auto& [node, step] : index) (*node_ids)[step] = node;
  }
  return out;
}

}  // namespace parity::verify
