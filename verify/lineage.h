// The lineage of a counterexample: the plan value instances the diverging
// element is computed from, walked back across ranks (collectives, send/recv)
// and loop iterations until the walk reaches placed values, which are the
// boundary the verifier assumes (and separately proves) equal to the spec.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/plan.h"
#include "reduce/stages.h"

namespace parity::verify {

struct LineageStep {
  int depth = 0;       // 0: the diverging value; n: n ops upstream
  int64_t rank = -1;   // in the checked (possibly reduced) mesh
  std::string rank_str;
  int64_t given_rank = -1;                // in the case as given
  std::map<std::string, int64_t> coords;  // its coordinates there, by axis
  std::string program, value, iter;
  std::string op;       // `matmul (line 12)`, `allreduce over tp`, `input`
  std::string placed;   // spec values this instance is placed on ("" when none)
  std::vector<size_t> from;  // indices of the steps it reads (earlier in the list are later in the walk)
};

// The operation where the numbers part (verify/culprit.h).
struct Culprit {
  size_t step = 0;   // its result's step in the lineage
  std::string op;    // `identity -> l4.attn.out.bug (line 812)`
  std::string why;   // what its operands and its result hold at the point run
  // Where unplaced operands could not be compared with the spec: values to
  // place so that the cause and the operations before it can be told apart.
  std::vector<std::string> place;
};

// The step describing node `id` of `g` (depth 0, reading nothing).
LineageStep lineage_step(const reduce::StageGraph& g, int32_t id, const std::function<std::string(int64_t)>& rank_name);

// Walks back from `value` on `rank` in iteration `iter` through the
// instance graph `g` of a validated case, breadth first, listing at most `max_steps` instances. Empty when the
// value is not found. `rank_name` prints a rank (e.g. in the original mesh).
// `node_ids`, when given, gets each step's node of `g`.
std::vector<LineageStep> lineage(const reduce::StageGraph& g, int64_t rank, const std::string& value,
                                 const std::string& iter, size_t max_steps,
                                 const std::function<std::string(int64_t)>& rank_name,
                                 std::vector<int32_t>* node_ids = nullptr);

}  // namespace parity::verify
