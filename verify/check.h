// The verifier: obligations from placements, proved by canonical forms,
// expansion or SMT; refuted by concrete evaluation, re-checked before shown.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/plan.h"
#include "verify/lineage.h"
#include "verify/progress.h"
#include "verify/staged.h"

namespace parity::verify {

struct VerifyOptions {
  std::string solver = "z3";      // z3 | cvc5 | both (must agree)
  unsigned timeout_ms = 10000;    // per obligation and solver
  int random_points = 3;          // concrete screening points
  uint64_t seed = 1;
  size_t expand_budget = 200000;  // monomials per obligation pair
  bool smt_all = false;           // every pair not equal by hash goes to SMT (backend tests)
  size_t max_smt_nodes = 50000;   // larger obligations are UNKNOWN rather than sent to a solver
  // Unrolled rank-instructions the full (unreduced) plan may have; beyond it
  // the verdict is UNKNOWN rather than an unbounded run.
  size_t max_rank_instructions = 20'000'000;
  // Symbolic terms a whole-instance check may build (each result element, a
  // matmul's element counted once per contracted index), about 250 bytes
  // each: a vocabulary of 32768 kept whole would otherwise take the machine's
  // memory. Beyond it the verdict is UNKNOWN after a numeric search.
  size_t max_terms = 20'000'000;
  // Verify a reduced instance (mesh, microbatch and shape reduction, reduce/)
  // when its preconditions hold; the original's schedule is then simulated on
  // the reduced mesh only beyond this many events.
  bool reduce = true;
  // Prove distinct stages once (reduce/stages.h) before the whole-plan check.
  bool stages = true;
  // Prove the stages of a case that writes one layer out many times through
  // a folded case keeping one layer of each run of exact images
  // (reduce/layer_fold.h); anything but VERIFIED there checks the case unfolded.
  bool fold = true;
  // Sizes the reduction keeps as given (reduce::Options::keep_sizes).
  std::map<std::string, std::string> keep_sizes;
  std::string cache_dir;  // proved stages are remembered here (--cache DIR)
  size_t schedule_budget = 20'000;
  Progress* progress = nullptr;  // updated as the run goes, when set
  unsigned threads = 0;          // for proving stages; 0: one per hardware thread
  StageShards shards;            // stages spread over processes (mpirun)
  // When a stage does not prove and the (reduced) plan has more rank-
  // instructions than this, it is first run numerically to look for a
  // counterexample before symbolic terms are built for all of it.
  size_t numeric_first_above = 100'000;
  // That numeric run first goes only as far as the failing stage's value
  // (off: every run evaluates the whole plan; the tests compare the two).
  bool numeric_focus = true;
  // Memory one numeric run of the whole plan may hold (two run side by side);
  // past it the run gives up and the verdict says so. 0: a quarter of the
  // machine's physical memory.
  size_t numeric_run_bytes = 0;
  // Seconds the whole-plan check may spend on obligations; past it the ones
  // left are UNKNOWN (a gate must end). 0: no limit.
  double time_limit_s = 1800;
};

enum class VerdictKind { verified, mismatch, unknown, invalid };
const char* verdict_name(VerdictKind k);
int verdict_exit_code(VerdictKind k);

struct Counterexample {
  std::string program, value, spec_value, op, rank, iter;
  int64_t rank_id = -1;  // in the verified (possibly reduced) mesh
  int64_t given_rank = -1;              // the rank it stands for in the case as given
  std::map<std::string, int64_t> coords;  // and its coordinates there, by axis
  std::vector<int64_t> plan_index, spec_index;
  std::string spec_expr, plan_expr;
  std::string difference;  // the smallest differing subterms
  double spec_num = 0, plan_num = 0;
  std::vector<std::pair<std::string, double>> inputs;  // the inputs the element depends on
  std::string found_by;                                // "concrete screening" or "z3 model"
  std::vector<LineageStep> lineage;  // what the diverging value is computed from (verify/lineage.h)
  std::optional<Culprit> culprit;    // the operation where the numbers part (verify/culprit.h)
};

struct PlacementStats {
  std::string label;  // program.value -> spec_value
  size_t obligations = 0, proved = 0, failed = 0, unknown = 0;
};

struct Verdict {
  VerdictKind kind = VerdictKind::unknown;
  std::string reason;
  std::vector<ir::Diag> diags;
  std::string uncovered;  // INVALID because this spec output's elements are not all placed
  size_t obligations = 0, unique = 0, by_hash = 0, by_expansion = 0, by_smt = 0, failed = 0, unknown = 0;
  size_t unchecked = 0;  // left undecided after the first mismatch
  std::vector<PlacementStats> placements;
  std::optional<Counterexample> cex;
  double seconds = 0;
  std::string solver;
  // What reduce/ did, and what it kept with the reason.
  std::vector<std::string> reductions, kept;
  int64_t verified_ranks = 0;  // ranks of the instance actually checked
  size_t stages = 0, unique_stages = 0;  // when proved by stages
  std::string second_look;  // on a reduced VERIFIED: what was run to look again, and that it agreed
  std::vector<std::string> notes;  // from the frontend (where an imported plan's values part)
  std::string stage_note;                // why the staged prover did not settle it
  std::string stage_difference;          // there: the smallest differing subterms (over the stage's inputs)
  size_t cached_stages = 0;              // distinct stages whose proof came from the cache
  std::vector<StageInfo> stage_list;     // the distinct stages, when proved by stages
  // Where the time went: validation and reduction, building the stages,
  // proving them, and the whole-plan check (when it ran).
  double reduce_seconds = 0, stage_build_seconds = 0, stage_prove_seconds = 0, whole_seconds = 0;
  double validate_seconds = 0;  // of reduce_seconds: validating the plan as given
  double fold_seconds = 0;      // folding layers and validating the folded case (not its stages)
  double second_look_seconds = 0;  // the second look at a reduced verdict (its instance reduced and checked)
  double read_seconds = 0;  // reading and converting the input (set by the caller that read it)
};

Verdict verify_case(const ir::Case& c, const std::string& file, const VerifyOptions& opt);

}  // namespace parity::verify
