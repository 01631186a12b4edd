// Model configurations (Llama-3, DeepSeek-V3, GPT) and the single-device
// training-step spec built from them. A config records the published sizes
// (shown by `parity gen --list`) and the reduced dims a generated file binds:
// verification runs at small shapes; the reduce/ stage argues why that suffices.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/spec.h"

namespace parity::corpus {

enum class Family { llama, deepseek, gpt };
const char* family_name(Family f);

// The published configuration, for documentation only.
struct RealConfig {
  int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0, head_dim = 0;
  // DeepSeek-V3: MLA ranks and MoE shape.
  int64_t q_lora = 0, kv_lora = 0, qk_nope = 0, qk_rope = 0, v_head = 0;
  int64_t experts = 0, topk = 0, expert_ffn = 0, dense_layers = 0, shared_experts = 0;
  std::string notes;
};

struct ModelConfig {
  std::string name;  // CLI name: llama3-8b, deepseek-v3-671b, gpt-small, ...
  Family family = Family::llama;
  RealConfig real;
  // Reduced dims (symbol -> default value). B batch, S sequence, H hidden, NH
  // heads, KV kv heads, D head dim, F FFN, V vocab; MLA: QL, KVL, DN, DR, DV;
  // MoE: E experts, FE expert FFN.
  std::map<std::string, int64_t> dims;
  int64_t layers = 2;        // reduced layer count
  int64_t topk = 0;          // MoE: experts per token (0: dense model)
  int64_t dense_layers = 0;  // MoE: the first layers keep a dense MLP
  bool tied = false;         // embedding and LM head share one parameter
  double norm_eps = 1e-5;
  double route_scale = 1.0;
  bool moe() const { return topk > 0; }
  bool mla() const { return family == Family::deepseek; }
  bool moe_layer(int64_t i) const { return moe() && i >= dense_layers; }
};

const std::vector<ModelConfig>& models();
// nullptr when unknown.
const ModelConfig* find_model(const std::string& name);

// How far the step goes: gradients only, gradients and the clipped global
// norm, or the full step with the AdamW update.
enum class Step { grads, clip, adamw };
const char* step_name(Step s);
bool parse_step(const std::string& s, Step& out);

// One parameter of the model: its spec shape and how Megatron shards it.
struct ParamDef {
  std::string name;
  std::vector<std::string> shape;  // dim expressions over the spec dims
  int tp_dim = -1;                 // split over tp along this dim (-1: replicated)
  int ep_dim = -1;                 // split over ep along this dim (experts)
  int64_t layer = -1;              // -1: embedding / final norm / head
  bool first = false, last = false;  // held by the first / last pipeline stage
};

// Optimizer and clipping constants shared by spec and plans.
struct StepConsts {
  // lr is on the large side so that a wrong gradient visibly moves the
  // updated parameters at the verifier's random screening points (where the
  // gradient norm is a few units, so clipping at 1.0 is active).
  double lr = 1e-2, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
  double clip = 1.0, clip_eps = 1e-6;
  int64_t step = 1;
};

// The parameters in a fixed order (embedding, layers, final norm, head).
std::vector<ParamDef> param_defs(const ModelConfig& m, int64_t layers);

struct SpecOptions {
  Step step = Step::adamw;
  int64_t layers = 0;                     // 0: the config's reduced count
  std::map<std::string, int64_t> dims;    // overrides of the reduced dims
};

// The single-device training step: forward, masked token-mean cross-entropy,
// backward (ir::append_backward), global-norm clipping, AdamW.
// `grads` (optional) receives value -> name of its gradient for the params and
// the residual stream at layer boundaries.
ir::Spec build_spec(const ModelConfig& m, const SpecOptions& o,
                    std::map<std::string, std::string>* grads = nullptr);

// Dims a spec binds: the config's reduced dims with overrides.
std::map<std::string, int64_t> spec_dims(const ModelConfig& m, const SpecOptions& o);

// Names used by spec and plans alike.
std::string grad_name(const std::string& param);      // "grad.<p>"
std::string new_param_name(const std::string& param);  // "new.<p>"
std::string moment_name(const std::string& param, int k);      // "m.<p>" / "v.<p>"
std::string new_moment_name(const std::string& param, int k);  // "new.m.<p>" / ...
std::string layer_out_name(int64_t layer);  // residual stream after a layer
inline constexpr const char* kEmbedOut = "embed.out";
inline constexpr const char* kLoss = "loss";
inline constexpr const char* kGradNorm = "grad_norm";

}  // namespace parity::corpus
