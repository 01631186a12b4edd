// The cause of a counterexample: the operation where the plan's numbers part
// from the spec's, found by running both programs at one point and walking
// the lineage back from the diverging value while some operand still differs
// from what the spec computes there. A report names it instead of the
// downstream value the first failing placement happens to sit on.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "reduce/stages.h"
#include "verify/lineage.h"

namespace parity::verify {

// `steps` and `nodes` as `lineage` returned them for a validated case's
// instance graph `g`; a culprit off the lineage (on another rank of a sum)
// is appended to both. Empty when the runs cannot be made (memory, an input
// that is not a region of a spec input) or the divergence does not show at
// the points tried. Never changes a verdict.
std::optional<Culprit> find_culprit(const reduce::StageGraph& g, std::vector<LineageStep>& steps,
                                    std::vector<int32_t>& nodes, uint64_t seed,
                                    const std::function<std::string(int64_t)>& rank_name);

}  // namespace parity::verify
