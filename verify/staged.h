// The staged prover: proves each distinct stage (reduce/stages.h) once, by
// canonical forms and expansion. It only ever answers "proved"; anything else
// sends the case to the whole-plan checker, which finds and re-checks
// counterexamples.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/plan.h"
#include "verify/progress.h"

namespace parity::verify {

// One distinct stage: what the explain view and the JSON report list.
struct StageInfo {
  std::string spec_value;  // the spec value the stage proves
  std::string hash;        // 16 hex digits of the canonical key (the cache file name)
  size_t instances = 0;    // stages of the plan with this key
  size_t obligations = 0;  // element obligations of one instance
  double seconds = 0;      // proving it (0 when it came from the cache)
  bool cached = false;
};

struct StagedResult {
  bool proved = false;
  std::string reason;  // why not, when not
  size_t stages = 0, unique = 0, obligations = 0, by_expansion = 0;
  size_t cached = 0;  // distinct stages found proved in the cache
  double build_seconds = 0, prove_seconds = 0;
  std::vector<StageInfo> list;  // distinct stages in first-met order (when proved)
  // Placed elements per plan placement (index), over every rank and loop
  // iteration: what the whole-plan checker would count as its obligations.
  std::map<uint32_t, size_t> placed_elements;
};

// `cache_dir` (optional): proved stages are recorded there by their full
// canonical key and skipped when met again (a later run of the same or an
// edited plan). A hit needs the whole key to match, not only its hash.
StagedResult prove_by_stages(const ir::Case& c, size_t expand_budget, size_t max_rank_instructions,
                             const std::string& cache_dir = "", Progress* progress = nullptr);

}  // namespace parity::verify
