#include "ir/id_ranges.h"

#include <algorithm>
#include <functional>
#include <set>
#include <vector>

#include "ir/op_registry.h"

namespace parity::ir {

bool moves_values(const std::string& kind) {
  const OpDef* d = OpRegistry::get().find(kind);
  return d && d->moves;
}

std::map<std::string, int64_t> id_ranges(const Spec& s, const TypeMap& types, const Bindings& b,
                                         NegativeIds* negative) {
  std::map<std::string, int64_t> r;
  std::map<std::string, std::set<int64_t>> neg;
  auto dim = [&](const std::string& v, size_t k) -> int64_t {
    auto it = types.find(v);
    if (it == types.end() || it->second.rank() <= k) return 0;
    int64_t out = 0;
    return it->second.shape[k].try_eval(b, out) ? out : 0;
  };
  auto at_least = [&](const std::string& v, int64_t n) {
    if (n > 0) r[v] = std::max(r[v], n);
  };
  std::map<std::string, const Op*> producer;
  std::function<void(const Graph&)> walk = [&](const Graph& g) {
    for (const auto& op : g.ops) {
      for (const auto& reg : op.regions) walk(reg);
      for (const auto& res : op.results) producer[res] = &op;
      if (op.kind == "embedding" && op.operands.size() >= 2)
        at_least(op.operands[1], dim(op.operands[0], 0));
      if ((op.kind == "cross_entropy" || op.kind == "cross_entropy_grad" || op.kind == "pick") &&
          op.operands.size() >= 2)
        at_least(op.operands[1], dim(op.operands[0], 1));
      if (op.kind == "embedding_grad" && !op.operands.empty())
        if (const Attr* a = op.attr("vocab"); a && std::holds_alternative<DimExpr>(*a)) {
          int64_t v = 0;
          if (std::get<DimExpr>(*a).try_eval(b, v)) at_least(op.operands[0], v);
        }
      // one_hot compares ids with offset .. offset+depth-1: ids up to the
      // last of those must be drawn (a pad label 128004 tested by a depth-1
      // one_hot at that offset is an id too).
      if (op.kind == "one_hot" && !op.operands.empty())
        if (const Attr* a = op.attr("depth"); a && std::holds_alternative<DimExpr>(*a)) {
          int64_t v = 0, off = 0;
          const Attr* o = op.attr("offset");
          if (o && std::holds_alternative<DimExpr>(*o) && !std::get<DimExpr>(*o).try_eval(b, off)) off = 0;
          if (std::get<DimExpr>(*a).try_eval(b, v)) {
            at_least(op.operands[0], std::max<int64_t>(off, 0) + v);
            // Negative ids tested (labels equal to an ignore_index of -100)
            // are drawn too: a plan that mishandles them must meet them.
            auto& n = neg[op.operands[0]];
            for (int64_t k = off; k < std::min<int64_t>(off + v, 0) && n.size() < 16; ++k) n.insert(k);
            if (n.empty()) neg.erase(op.operands[0]);
          }
        }
    }
  };
  walk(s.graph);
  // Back through shape ops to the inputs, to a fixed point.
  std::vector<std::string> work;
  for (const auto& [v, n] : r) work.push_back(v);
  for (const auto& [v, n] : neg)
    if (!r.count(v)) {
      r[v] = 1;  // tested for negative ids only: 0 is an id too
      work.push_back(v);
    }
  while (!work.empty()) {
    const std::string v = work.back();
    work.pop_back();
    auto p = producer.find(v);
    if (p == producer.end()) continue;
    // A `where` picks its values from its second and third operands (labels
    // masked to 0 before the loss are still labels); its first is the mask.
    const bool picks = p->second->kind == "where" && p->second->operands.size() == 3;
    // Any other op computing ids from integers (ids clamped by `minimum(ids,
    // V-1)`, labels times a mask, shifted by `add_scalar`) passes the range
    // to its integer operands: too large a range only tries more ids, too
    // small one leaves those a wrong shard offset mishandles untried.
    const bool integer_op = !picks && !moves_values(p->second->kind);
    const int64_t n = r[v];
    const std::set<int64_t> ng = neg.count(v) ? neg.at(v) : std::set<int64_t>{};
    for (size_t k = picks ? 1 : 0; k < p->second->operands.size(); ++k) {
      const std::string& o = p->second->operands[k];
      if (integer_op) {
        auto t = types.find(o);
        if (t == types.end() || t->second.dtype != DType::i64) continue;
      }
      bool grew = false;
      if (r[o] < n) {
        r[o] = n;
        grew = true;
      }
      for (int64_t x : ng)
        if (neg[o].size() < 16) grew |= neg[o].insert(x).second;
      if (neg.count(o) && neg[o].empty()) neg.erase(o);
      if (grew) work.push_back(o);
    }
  }
  if (negative)
    for (const auto& [v, n] : neg) (*negative)[v].assign(n.begin(), n.end());
  return r;
}

}  // namespace parity::ir
