// Where a random mutation of a plan can go: every op of every program, loop
// bodies included. Shared by the mutation tests.
#pragma once
#include <cstddef>
#include <vector>

#include "ir/plan.h"

namespace parity::mutation {

struct Site {
  size_t program;
  std::vector<size_t> path;  // op index, then region op indices
};

inline void collect(const ir::Graph& g, size_t prog, const std::vector<size_t>& prefix,
                    std::vector<Site>& out) {
  for (size_t i = 0; i < g.ops.size(); ++i) {
    auto p = prefix;
    p.push_back(i);
    out.push_back({prog, p});
    for (const auto& r : g.ops[i].regions) collect(r, prog, p, out);
  }
}

// The graph holding the site's op (a program or a loop body).
inline ir::Graph* graph_of(ir::Plan& plan, const Site& s) {
  ir::Graph* g = &plan.programs[s.program].graph;
  for (size_t d = 0; d + 1 < s.path.size(); ++d) g = &g->ops[s.path[d]].regions[0];
  return g;
}

// A collective made an identity (the reduction dropped).
inline void drop_collective(ir::Op& op) {
  op.kind = "identity";
  op.attrs.clear();
}

// A collective run twice: a copy at the site's position feeds the original.
inline void duplicate_collective(ir::Graph& g, ir::Op& op, size_t at) {
  ir::Op first = op;
  first.results = {op.results[0] + "_dup"};
  op.operands = {first.results[0]};
  g.ops.insert(g.ops.begin() + static_cast<long>(at), first);
}

}  // namespace parity::mutation
