// The layer library: one training step's forward pass (embedding, attention,
// MLP / MoE, LM head and loss) emitted op by op, parameterised by a parallel
// context, so the same code builds the single-device spec and every program of
// a Megatron-style plan. The plan variant inserts the collectives of tensor,
// sequence, context and expert parallelism and records where its values sit in
// the spec (`Mark`s, turned into placements by the generator).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "corpus/builder.h"
#include "corpus/models.h"
#include "ir/autodiff.h"
#include "ir/plan.h"

namespace parity::corpus {

// Emits ops into an ir::Graph, inferring each result's type with the op's
// shape rule as it goes (a generator bug fails at the op, not in a validator
// later). Value names are unique per program, nested loop bodies included, so
// an emitter and the emitters of its loop bodies share one name set; a wanted
// name that is taken gets a numeric suffix.
class Emitter {
 public:
  // `b` binds the dims; a plan program also gets its mesh (axis sizes bind too).
  Emitter(const ir::Bindings& b, const ir::Mesh* mesh);
  ~Emitter();
  Emitter(const Emitter&) = delete;
  Emitter& operator=(const Emitter&) = delete;

  ir::Graph& graph() { return *g_; }
  const ir::TensorType& type(const std::string& v) const;
  const ir::Bindings& bindings() const;

  std::string input(const std::string& name, ir::DType dtype, const Shape& shape);
  // One-result op named `name` (made unique); returns the name given.
  std::string op(const std::string& kind, const std::vector<std::string>& operands,
                 const Attrs& attrs, const std::string& name);
  void op0(const std::string& kind, const std::vector<std::string>& operands, const Attrs& attrs);
  std::vector<std::string> op_n(const std::string& kind, const std::vector<std::string>& operands,
                                const Attrs& attrs, const std::vector<std::string>& names);
  void output(const std::string& v) { g_->outputs.push_back(v); }
  // A loop over `var` = 0..count-1 carrying `init` (results named `names`);
  // `body` gets the region's emitter and the carried values, and returns the
  // next ones.
  std::vector<std::string> loop(
      const std::string& count, const std::string& var, const std::vector<std::string>& init,
      const std::vector<std::string>& names,
      const std::function<std::vector<std::string>(Emitter&, const std::vector<std::string>&)>&
          body);
  // Appends the backward pass of this graph (ir::append_backward; a loop body
  // is differentiated on its own) and returns value -> gradient name.
  std::map<std::string, std::string> backward(const ir::GradRequest& req);
  // The backward of ops [from, to) only (one microbatch's forward in an
  // unrolled pipeline schedule), appended at the end: the values those ops
  // read from elsewhere are constants to it. Gradient names that are taken
  // get a numeric suffix.
  std::map<std::string, std::string> backward_range(const ir::GradRequest& req, size_t from,
                                                    size_t to);
  std::string unique(const std::string& want);

 private:
  struct Env;
  Emitter(ir::Graph* g, std::shared_ptr<Env> env, Emitter* parent);
  static ir::TensorType type_of(ir::DType dtype, const Shape& shape);
  void infer(const ir::Op& op);

  std::unique_ptr<ir::Graph> own_;
  ir::Graph* g_;
  std::shared_ptr<Env> env_;
  Emitter* parent_ = nullptr;
};

// Dim expression text: products, sums and quotients that drop 1s and 0s.
std::string dmul(const std::string& a, const std::string& b);
std::string dadd(const std::string& a, const std::string& b);
std::string ddiv(const std::string& a, const std::string& b);

// Where a plan value sits in the spec: a region (offset, size per dim) of the
// spec value, or a partial sum over `partial` axes of that region.
struct Mark {
  std::string value, spec_value;
  Region region;
  std::vector<std::string> partial;
};

// The parallel context of one program. In the spec every axis has size 1.
struct Ctx {
  const ModelConfig* model = nullptr;
  bool plan = false;
  std::map<std::string, int64_t> axes;  // mesh axes of the plan (sizes > 1 only)
  bool sp = false;                      // sequence parallelism inside the TP group
  // The token block of this program's (micro)batch in the spec's [B, S] grid.
  std::string b_off = "0", b_size = "B";
  std::string s_off = "0", s_size = "S";  // the context-parallel chunk (queries)
  // Balanced CP: the second chunk's offset (the local sequence is two halves
  // of s_size, at s_off and s_off2); empty otherwise.
  std::string s_off2;
  // Where the ops of the current block go (plan only): balanced CP places a
  // two-chunk value as two slices, emitted here.
  Emitter* em = nullptr;
  // Forward value of a parameter (the program input, or its all-gathered form).
  std::function<std::string(const std::string&)> param = [](const std::string& p) { return p; };
  std::vector<Mark> marks;  // plan only
  // The residual stream at block boundaries as (value, spec value), in order:
  // after the embedding, each attention block and each layer.
  std::vector<std::pair<std::string, std::string>> boundaries;
  ir::Bindings dims;        // concrete dims, for constants such as 1/sqrt(D)

  int64_t size(const std::string& axis) const;
  bool has(const std::string& axis) const { return size(axis) > 1; }
  // `dim/axis`, or `dim` when the axis is absent.
  std::string split(const std::string& dim, const std::string& axis) const;
  // `$axis*(chunk)`, or "0".
  std::string at(const std::string& axis, const std::string& chunk) const;
  // Residual-stream sequence block: the CP chunk, further split over tp under SP.
  std::string res_off() const;
  std::string res_size() const;
  std::string tokens() const;      // query-block tokens: b_size*s_size
  std::string res_tokens() const;  // residual-block tokens
  std::string key_len() const;     // keys seen by attention: S under CP, else s_size
  std::string half_chunk() const;  // s_size/2 (balanced CP)

  // Records a placement for a plan value (no-op in the spec).
  void mark(const std::string& value, const std::string& spec_value, const Region& r,
            std::vector<std::string> partial = {});
  // Standard regions.
  Region res_region(const std::string& last) const;       // [b, s_res, last]
  Region tok_region(const std::string& last) const;       // [b, s, last]
  Region tp_cols(const std::string& dim) const;           // [b, s, dim split over tp]
  double dim(const std::string& expr) const;
};

// Tensor-parallel region boundaries (Megatron's f/g, or SP's allgather /
// reduce-scatter along `seq_dim`).
std::string tp_enter(Emitter& e, Ctx& c, const std::string& x, int seq_dim, const std::string& name);
std::string tp_exit(Emitter& e, Ctx& c, const std::string& x, int seq_dim, const std::string& name);

// The data inputs of a program as values: token ids [b, s], labels [b, s],
// mask [b, s], rotary tables [S, R/2] (full length; sliced per CP chunk).
struct Data {
  std::string tokens, labels, mask, cos, sin;
};

// Embedding (vocab-parallel under TP) -> residual stream [b, s_res, H].
std::string embed(Emitter& e, Ctx& c, const Data& d);
// One transformer layer on the residual stream.
std::string layer(Emitter& e, Ctx& c, int64_t i, const std::string& x, const Data& d);

// Final norm and LM head -> logits [tokens, V/tp].
std::string head_logits(Emitter& e, Ctx& c, const std::string& x);

// Loss of the spec: masked token-mean cross-entropy.
std::string spec_loss(Emitter& e, Ctx& c, const std::string& logits, const Data& d);

// Plan losses return the masked sum of token losses of this block (a partial
// sum of count * loss) and the gradient of that sum with respect to the
// logits, scaled by `inv_count` = 1 / (tokens in the global batch).
struct PlanLoss {
  std::string ce_sum;        // [] masked sum over the block's tokens
  std::string seed_value;    // the value the backward starts from
  std::string seed_grad;     // its gradient (defined in the graph)
};
PlanLoss plan_loss(Emitter& e, Ctx& c, const std::string& logits, const Data& d,
                   const std::string& inv_count);

// The global gradient norm over (param, grad value) pairs. In plans a
// param's squared norm is summed over `distinct_axes[param]` (the axes along
// which its local grads are different shards; replicas are counted once), and
// the total over `total_axes` (pipeline stages). `sumsq`, when given,
// receives each param's squared norm value (`clip.sumsq.<param>`).
std::string global_norm(Emitter& e, const std::vector<std::pair<std::string, std::string>>& grads,
                        const std::map<std::string, std::vector<std::string>>& distinct_axes,
                        const std::vector<std::string>& total_axes,
                        std::map<std::string, std::string>* sumsq = nullptr);
// min(1, clip / (norm + eps)).
std::string clip_coef(Emitter& e, const std::string& norm, const StepConsts& k);
// AdamW of one parameter (grad already clipped); results named `names`
// (p', m', v').
std::vector<std::string> adamw(Emitter& e, const std::string& p, const std::string& g,
                               const std::string& m, const std::string& v,
                               const std::vector<std::string>& names, const StepConsts& k);

// {axes: [...], reduce: ...} of a collective.
Attrs axes_attr(const std::vector<std::string>& axes, const char* reduce = nullptr);

}  // namespace parity::corpus
