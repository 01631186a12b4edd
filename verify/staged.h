// The staged prover: proves each distinct stage (reduce/stages.h) once, by
// canonical forms and expansion. It only ever answers "proved"; anything else
// sends the case to the whole-plan checker, which finds and re-checks
// counterexamples.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/plan.h"
#include "reduce/stages.h"
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
  int shard = 0;  // the process that proved it (MPI rank), when spread
};

// Where a stage did not prove: the first element whose spec and plan terms
// differ in canonical form, with both terms over the stage's inputs.
struct StageFailure {
  uint32_t placement = 0;
  int64_t rank = -1;
  std::string iter;
  int64_t elem = 0;  // flat index in the plan value
  std::string spec_expr, plan_expr, difference;
};

struct StagedResult {
  bool proved = false;
  std::string reason;  // why not, when not
  size_t stages = 0, unique = 0, obligations = 0, by_expansion = 0;
  size_t cached = 0;  // distinct stages found proved in the cache
  // Denominators that can be 0 (counts of tokens) which a canonical form
  // cancelled (TermTable::zero_cancelled): the proof holds where they are
  // not 0, so verify runs the case at a point with masks mostly off.
  size_t zero_cancelled = 0;
  double build_seconds = 0, prove_seconds = 0;
  std::vector<StageInfo> list;  // distinct stages in first-met order (when proved)
  // Placed elements per plan placement (index), over every rank and loop
  // iteration: what the whole-plan checker would count as its obligations.
  std::map<uint32_t, size_t> placed_elements;
  std::optional<StageFailure> failure;  // the stage that did not prove, when one did not
  // The unrolled instance graph, kept for the counterexample's lineage.
  std::shared_ptr<const reduce::StageGraph> graph;
};

// How the distinct stages are spread: over `threads` threads of this process,
// and over `count` processes (MPI ranks) of which this is `index`; stage k
// belongs to process k % count. `sum` adds a vector elementwise over the
// processes (an all-reduce); it must be set when count > 1.
struct StageShards {
  int index = 0, count = 1;
  std::function<void(std::vector<double>&)> sum;
};

struct StageOptions {
  size_t expand_budget = 5000;
  // Bytes of symbolic terms each prover may build (verify/term.h); past
  // them its stage does not prove.
  size_t max_term_bytes = SIZE_MAX;
  size_t max_rank_instructions = 20'000'000;
  // Past this many symbolic terms for the spec alone (term_estimate.h), which
  // every proof by stages builds, the stages are not tried.
  size_t max_terms = 20'000'000;
  // Proved stages are recorded here by their full canonical key and skipped
  // when met again (a later run of the same or an edited plan). A hit needs
  // the whole key to match, not only its hash.
  std::string cache_dir;
  Progress* progress = nullptr;
  unsigned threads = 1;
  StageShards shards;
  // The case's spec value types when its validation already computed them.
  const ir::TypeMap* spec_types = nullptr;
  // Spec values whose stages are proved elsewhere (reduce/layer_fold.h).
  const std::set<std::string>* assumed = nullptr;
  // Of those, the ones whose transfers are still proved (reduce/stages.h).
  const reduce::OpenStages* open = nullptr;
  // Literal values read as indeterminates (reduce::Result::generalized):
  // every stage is proved for every value of them. No cache is used then
  // (a stage cached as proved with the literals as written is not).
  const std::set<double>* literals = nullptr;
};

StagedResult prove_by_stages(const ir::Case& c, const StageOptions& opt);

}  // namespace parity::verify
