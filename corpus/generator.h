// Plan generation: Megatron-LM style parallel plans for a model config, paired
// with the spec they implement. Mesh axes dp, ep, tp, cp, pp (size-1 axes are
// omitted, except dp which always exists so the mesh is never empty).
//
//   DP   batch split over dp (and ep, which is data parallel for dense layers);
//        token-weighted loss: each rank sums its masked token losses, the
//        backward starts from 1/(global token count), grads are summed.
//   ZeRO 1: grads all-reduced, AdamW on this rank's shard (optimizer state
//        sharded), params all-gathered; 2: grads reduce-scattered over dp
//        after each microbatch and accumulated as shards; 3: params held as
//        dp shards and all-gathered before use in the forward and again in
//        the backward (their gradients come back reduce-scattered by autodiff).
//        With CP the shards go over dp x cp (Megatron's data-parallel group
//        with context parallelism).
//   TP   column/row-parallel linears, heads split, vocab-parallel embedding
//        and cross-entropy; SP: sequence-split residual stream.
//   CP   sequence split; K/V all-gathered; causal softmax with query offsets.
//        Balanced (cp_balanced): rank i holds chunks i and 2cp-1-i of 2cp, so
//        every rank gets the same share of the causal mask.
//   EP   experts split over ep; all-to-all dispatch and combine.
//   PP   one program per stage. seq: a microbatch loop (forward and backward
//        of one microbatch per iteration), send/recv with $pp+-1 peers and $mb
//        tags. 1f1b / interleaved: unrolled Megatron schedules (warm-up
//        forwards, steady one-forward-one-backward, cool-down backwards);
//        the backward of each microbatch is autodiff of its forward ops.
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
  // Pipeline order: seq (a microbatch loop, forward then backward of one
  // microbatch per iteration), 1f1b (PipeDream-flush / Megatron: pp-1-s warm-up
  // forwards, then one forward and one backward), interleaved (Megatron's
  // virtual stages: `vpp` model chunks per stage). 1f1b and interleaved are
  // unrolled: every microbatch's ops are written out.
  std::string schedule = "seq";
  int64_t vpp = 1;               // model chunks per stage (interleaved only)
  bool cp_balanced = false;      // CP: rank i holds chunks i and 2cp-1-i of the sequence
  int64_t layers = 0;            // 0: max(config's reduced count, pp)
  Step step = Step::adamw;
  std::map<std::string, int64_t> dims;  // overrides of the reduced dims
  // Which intermediate values get placements (for localizing a divergence):
  // all (activations and the gradients of the residual stream), forward
  // (activations only), io (only inputs and outputs).
  std::string marks = "all";
  // Place values inside a microbatch loop too (their regions use $mb): the
  // divergence is localized to a microbatch, and verify can cut the loop into
  // stages. `--no-loop-marks` turns it off.
  bool loop_marks = true;
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
