// Coverage of the spec's outputs at the sizes as given: every element of every
// spec output lies in the box of some placement, on some rank that runs its
// program and in some loop iteration. Checked on boxes, never element by
// element, so it costs the same at a vocabulary of 128256 as at 4
// (docs/soundness.md, "Coverage at the sizes as given").
#pragma once
#include <map>
#include <optional>
#include <string>

#include "ir/plan.h"
#include "ir/validate.h"

namespace parity::ir {

// The first spec output with an element no placement covers, with a message
// naming the element; nullopt when every output is covered (or an output's
// placements are too many to enumerate here, whose coverage is then checked
// on the instance verify proves). `b`: the dims as given; `loops`: each
// program's loop indices with their counts.
struct CoverageGap {
  std::string output, message;
};
std::optional<CoverageGap> output_coverage_gap(const Plan& p, const Spec& spec, const TypeMap& spec_types,
                                               const Bindings& b,
                                               const std::map<std::string, std::map<std::string, int64_t>>& loops);

}  // namespace parity::ir
