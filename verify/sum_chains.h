// Chains of additions inside one stage (acc = add(acc, x): the global gradient
// norm adds up the squares of every gradient) are summed once, at the end.
// Built one by one, each partial sum of a chain of n additions is a flat
// canonical sum as long as the chain so far: n^2 work in all, the largest cost
// of a 126-layer plan's stages. A partial sum is left unbuilt only when its one
// use in the stage is another addition and nothing else reads it (it is not
// placed and not the stage's spec value); the terms are the same either way,
// since a flat sum does not depend on the order it was built in.
#pragma once
#include <functional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/interp.h"
#include "reduce/stages.h"
#include "verify/term.h"

namespace parity::verify {

class SumChains {
 public:
  using T = ir::Tensor<TermId>;

  // `order`: the stage's nodes that will run (spec or plan); `keep`: a node
  // that must be built (the stage's spec value, or -1).
  SumChains(TermTable& tt, const reduce::StageGraph& g, const std::vector<int32_t>& order, int32_t keep)
      : tt_(tt), g_(g) {
    std::unordered_map<int32_t, int> uses;
    std::unordered_map<int32_t, int32_t> user;
    for (int32_t id : order)
      for (int32_t d : node(id).deps) {
        ++uses[d];
        user[d] = id;
      }
    for (int32_t id : order) {
      if (id == keep || !is_add(id) || !node(id).placements.empty()) continue;
      if (auto u = uses.find(id); u != uses.end() && u->second == 1 && is_add(user.at(id))) defer_.insert(id);
    }
  }

  enum class Outcome { not_handled, deferred, done };

  // Runs node `id` when it is an addition that reads or makes a partial sum:
  // `deferred` (nothing to store), or `done` with the built value in `out`.
  // `value` gives operands that were built; `eval` runs the op as usual (an
  // addition that broadcasts).
  Outcome run(int32_t id, const std::function<const T&(int32_t)>& value,
              const std::function<T(const std::vector<const T*>&)>& eval, T& out) {
    if (!is_add(id)) return Outcome::not_handled;
    const std::span<const int32_t> deps = node(id).deps;
    bool reads = pending_.count(deps[0]) || pending_.count(deps[1]);
    if (!reads && !defer_.count(id)) return Outcome::not_handled;
    auto shape_of = [&](int32_t d) -> const std::vector<int64_t>& {
      auto it = pending_.find(d);
      return it != pending_.end() ? it->second.shape : value(d).shape;
    };
    if (shape_of(deps[0]) != shape_of(deps[1])) {
      // Broadcasting: build the operands and add as usual.
      T a = built(deps[0], value), b = built(deps[1], value);
      out = eval({&a, &b});
      return Outcome::done;
    }
    Pending r;
    r.shape = shape_of(deps[0]);
    for (int32_t d : deps) {
      if (auto it = pending_.find(d); it != pending_.end()) {
        if (r.parts.empty()) {
          r.parts = std::move(it->second.parts);
        } else {
          for (size_t e = 0; e < r.parts.size(); ++e)
            r.parts[e].insert(r.parts[e].end(), it->second.parts[e].begin(), it->second.parts[e].end());
        }
        pending_.erase(it);
      } else {
        const T& v = value(d);
        r.parts.resize(v.data.size());
        for (size_t e = 0; e < v.data.size(); ++e) r.parts[e].push_back(v.data[e]);
      }
    }
    if (defer_.count(id)) {
      pending_[id] = std::move(r);
      return Outcome::deferred;
    }
    out = build(r);
    return Outcome::done;
  }

 private:
  struct Pending {
    std::vector<int64_t> shape;
    std::vector<std::vector<TermId>> parts;  // per element: the terms to add
  };

  const reduce::Node& node(int32_t id) const { return g_.nodes()[static_cast<size_t>(id)]; }

  bool is_add(int32_t id) const {
    const reduce::Node& n = node(id);
    if (n.instr < 0 || n.coll >= 0) return false;
    const ir::Instr& ins = g_.instr(n);
    return ins.kind == ir::Instr::exec && ins.op->kind == "add" && n.deps.size() == 2;
  }

  T build(const Pending& p) {
    T t;
    t.shape = p.shape;
    for (const auto& terms : p.parts) t.data.push_back(tt_.sum(terms));
    return t;
  }

  T built(int32_t d, const std::function<const T&(int32_t)>& value) {
    auto it = pending_.find(d);
    if (it == pending_.end()) return value(d);
    T t = build(it->second);
    pending_.erase(it);
    return t;
  }

  TermTable& tt_;
  const reduce::StageGraph& g_;
  std::unordered_set<int32_t> defer_;
  std::unordered_map<int32_t, Pending> pending_;
};

}  // namespace parity::verify
