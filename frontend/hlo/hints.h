// Placements of intermediate values, inferred for a plan that places only
// its inputs and results (what XLA's modules say): spec and plan run at one
// random point, and a plan value computed by the same source operation as a
// spec value (the same opcode at the same line) is placed where its numbers
// are that value's, whole, one tile of it, or a partial sum over mesh axes.
//
// A placement is a claim the verifier proves like any other; an inferred one
// only lets it cut the plan into stages (and name the first operation whose
// result no longer matches). Where one cannot be proved, the plan is checked
// again without the inferred placements (tools/load.cpp), so a verdict never
// rests on a guess.
#pragma once
#include <map>
#include <set>
#include <string>

#include "ir/plan.h"

namespace parity::frontend::hlo {

struct HintOptions {
  uint64_t seed = 1;
  // Values held by both runs together; past it no placement is inferred.
  size_t max_bytes = size_t{1} << 30;
};

struct Hints {
  std::set<std::string> placed;  // plan values given an inferred placement
  // The first plan operation (in program order) that computes what a spec
  // operation at the same source line computes, whose result matches no spec
  // value while every operand matches one (or is an input): where the plan's
  // numbers part from the spec's at the point run. Its label, then what its
  // operands hold. Empty when every such result matched.
  std::string culprit;
};

// Adds the placements found to `c.plan` (program "spmd"). `spec_keys` /
// `plan_keys`: value -> source operation.
Hints infer_placements(ir::Case& c, const std::map<std::string, std::string>& spec_keys,
                       const std::map<std::string, std::string>& plan_keys,
                       const HintOptions& opt = {});

}  // namespace parity::frontend::hlo
