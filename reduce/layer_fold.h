// The layer fold: a case that writes the same layer out many times (126 for
// Llama-3 405B, a run of interior layers in every pipeline stage) is proved
// through a folded case that keeps, of each run of layers that are exact
// images of one another (reduce/layer_blocks.h), the first, with the ops a
// kept op needs from the others. The argument is in docs/soundness.md
// ("Layer fold"); the checks here are its conditions, and when one fails the
// case is not folded (the reason is said).
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "ir/plan.h"
#include "ir/validate.h"
#include "reduce/stages.h"

namespace parity::reduce {

struct LayerFold {
  bool folded = false;
  ir::Case kase;  // the folded case, when folded
  // Spec values of dropped layers that the folded case still places: stubs
  // (a `fill` carrying the placement) for values of dropped layers that kept
  // ops read. Their stages are images of a kept layer's and are not proved.
  std::set<std::string> assumed;
  // Of those, the ones a kept program receives (the next pipeline stage's
  // copy of a dropped layer's output): their stages are built with the spec
  // value free, proving only these (program, value) placements.
  OpenStages open;
  size_t layers = 0, dropped = 0;
  std::string summary;  // what was folded, or why not
};

// `c` must be validated; `spec_types` and `types` (program -> value types)
// come from its validation. Plans whose programs hold too few layers for
// 40% of them to go (first, representative and last are kept) are not
// analysed: the analysis would cost more than it saves.
// Spec and programs are folded on up to `threads` threads (0: one per
// hardware thread).
LayerFold fold_layers(const ir::Case& c, const ir::TypeMap& spec_types,
                      const std::map<std::string, ir::TypeMap>& types, size_t threads = 0);

}  // namespace parity::reduce
