// Plan generation: Megatron-LM style parallel plans for a model config, paired
// with the spec they implement. Mesh axes dp, ep, tp, cp, pp (size-1 axes are
// omitted, except dp which always exists so the mesh is never empty).
//
//   DP   batch split over dp (and ep, which is data parallel for dense layers);
//        token-weighted loss: each rank sums its masked token losses, the
//        backward starts from 1/(global token count), grads are summed.
//   ZeRO 1/2: grads reduce-scattered over dp, AdamW on the shard, params
//        all-gathered; 3: params held as dp shards and all-gathered before use
//        (their gradients come back reduce-scattered by autodiff).
//   TP   column/row-parallel linears, heads split, vocab-parallel embedding
//        and cross-entropy; SP: sequence-split residual stream.
//   CP   sequence split; K/V all-gathered; causal softmax with query offsets.
//   EP   experts split over ep; all-to-all dispatch and combine.
//   PP   one program per stage; a microbatch loop (forward and backward of one
//        microbatch per iteration), send/recv with $pp+-1 peers and $mb tags.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "corpus/models.h"
#include "ir/plan.h"

namespace parity::corpus {

struct GenOptions {
  std::string model = "llama3-8b";
  int64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  bool sp = false;
  int zero = 0;       // 0, 1, 2, 3
  int64_t mb = 1;     // microbatches
  std::string schedule = "seq";  // only the sequential fwd+bwd-per-microbatch order
  int64_t layers = 0;            // 0: max(config's reduced count, pp)
  Step step = Step::adamw;
  std::map<std::string, int64_t> dims;  // overrides of the reduced dims
  // Which intermediate values get placements (for localizing a divergence):
  // all (activations and the gradients of the residual stream), forward
  // (activations only), io (only inputs and outputs).
  std::string marks = "all";
  // Place values inside a microbatch loop too (their regions use $mb). Off by
  // default: ir::validate_plan does not bind loop indices in regions yet.
  bool loop_marks = false;
};

// The dims a generated case binds: the config's reduced dims, scaled so every
// split divides evenly.
std::map<std::string, int64_t> plan_dims(const ModelConfig& m, const GenOptions& o);

// Spec and plan. Throws ir::InvalidInput on options that cannot be built
// (unknown model, a split that cannot divide, MoE options on a dense model).
ir::Case generate(const GenOptions& o);

// One line describing the options, e.g. "llama3-8b dp=2 tp=2 mb=2".
std::string describe(const GenOptions& o);
// The `parity gen` arguments that make this case, e.g. "llama3-8b --dp 2 --mb 2".
std::string cli_args(const GenOptions& o);

// Header lines of a checked-in case: how it was made and what `parity verify`
// must answer (read by tests/run_expect.sh).
std::string case_header(const GenOptions& o, const std::string& bug, int expect_exit,
                        const std::string& expect_error);

}  // namespace parity::corpus
