// Neural-network ops of a training step: normalizations, attention pieces,
// embedding, cross-entropy, MoE routing, optimizer steps.
#include "ir/op_registry.h"

namespace parity::ir {

namespace {
std::vector<TensorType> first(const ShapeCtx& c) { return {c.in[0]}; }

void expect_shape(const ShapeCtx& c, size_t k, const std::vector<DimExpr>& want, const std::string& what) {
  if (c.in[k].rank() != want.size())
    c.fail(what + ": operand " + std::to_string(k) + " has rank " + std::to_string(c.in[k].rank()) + ", expected " +
           std::to_string(want.size()));
  for (size_t j = 0; j < want.size(); ++j) c.expect_same(c.in[k].shape[j], want[j], what + " dim " + std::to_string(j));
}

std::vector<TensorType> norm_rule(const ShapeCtx& c) {
  if (c.in[0].rank() < 1) c.fail("normalization of a scalar");
  for (size_t k = 1; k < c.in.size(); ++k) expect_shape(c, k, {c.in[0].shape.back()}, "norm weight");
  return {c.in[0]};
}

std::vector<TensorType> rope_rule(const ShapeCtx& c) {
  // x [..., S, D]; cos, sin [S, D/2]; pairs (2i, 2i+1) rotate by angle i.
  const auto& x = c.in[0].shape;
  if (x.size() < 2) c.fail("rope: x needs rank >= 2 ([..., S, D])");
  if (c.eval(x.back()) % 2) c.fail("rope: head dim " + x.back().str() + " must be even");
  expect_shape(c, 1, {x[x.size() - 2], x.back() / 2}, "rope cos");
  expect_shape(c, 2, {x[x.size() - 2], x.back() / 2}, "rope sin");
  return {c.in[0]};
}

std::vector<TensorType> embedding_rule(const ShapeCtx& c) {
  if (c.in[0].rank() != 2) c.fail("embedding: table must be [V, H]");
  if (c.in[1].dtype != DType::i64) c.fail("embedding: ids must be i64");
  auto out = c.in[1].shape;
  out.push_back(c.in[0].shape[1]);
  return {TensorType{c.in[0].dtype, out}};
}

std::vector<TensorType> embedding_grad_rule(const ShapeCtx& c) {
  // (ids [...], dy [..., H]) -> [V, H]
  DimExpr v = c.i("vocab");
  if (c.in[0].dtype != DType::i64) c.fail("embedding_grad: ids (operand 0) must be i64");
  if (c.in[1].rank() != c.in[0].rank() + 1) c.fail("embedding_grad: dy must be [ids..., H]");
  for (size_t k = 0; k < c.in[0].rank(); ++k) c.expect_same(c.in[1].shape[k], c.in[0].shape[k], "embedding_grad dy dim");
  auto h = c.in[1].shape.back();
  return {TensorType{c.in[1].dtype, {v, h}}};
}

std::vector<TensorType> ce_rule(const ShapeCtx& c) {
  if (c.in[0].rank() != 2) c.fail("cross_entropy: logits must be [N, V]");
  expect_shape(c, 1, {c.in[0].shape[0]}, "cross_entropy labels");
  if (c.in[1].dtype != DType::i64) c.fail("cross_entropy: labels must be i64");
  expect_shape(c, 2, {c.in[0].shape[0]}, "cross_entropy mask");
  std::string red = c.s("reduction", "mean");
  if (red != "mean" && red != "sum") c.fail("cross_entropy: reduction must be mean or sum");
  if (c.in.size() == 4) {  // the gradient form: (logits, labels, mask, dloss)
    expect_shape(c, 3, {}, "cross_entropy_grad dloss");
    return {c.in[0]};
  }
  return {TensorType{c.in[0].dtype, {}}};
}

std::vector<TensorType> pick_rule(const ShapeCtx& c) {
  // (logits [N, Vs], labels [N]) -> [N]: logits[n, labels[n]-offset] when in range, else 0.
  if (c.in[0].rank() != 2) c.fail("pick: logits must be [N, V]");
  expect_shape(c, 1, {c.in[0].shape[0]}, "pick labels");
  if (c.in[1].dtype != DType::i64) c.fail("pick: labels must be i64");
  c.i("offset");
  return {TensorType{c.in[0].dtype, {c.in[0].shape[0]}}};
}

std::vector<TensorType> one_hot_rule(const ShapeCtx& c) {
  auto out = c.in[0].shape;
  out.push_back(c.i("depth"));
  c.i("offset");
  return {TensorType{DType::f32, out}};
}

std::vector<TensorType> topk_rule(const ShapeCtx& c) {
  int64_t k = c.ival("k", 0);
  if (c.in[0].rank() < 1) c.fail("topk_mask of a scalar");
  int64_t e = c.eval(c.in[0].shape.back());
  if (k < 1 || k > e) c.fail("topk_mask: k=" + std::to_string(k) + " must be in [1, " + std::to_string(e) + "]");
  return {TensorType{c.in[0].dtype, c.in[0].shape}};
}

std::vector<TensorType> optimizer_rule(const ShapeCtx& c) {
  for (size_t k = 1; k < c.in.size(); ++k) expect_shape(c, k, c.in[0].shape, c.op.kind);
  return std::vector<TensorType>(c.in.size() - 1, c.in[0]);  // param and state(s)
}
}  // namespace

void register_nn_ops(OpRegistry& r) {
  r.add(OpDef{"softmax", 1, 1,
              {{"dim", AttrKind::Int, true}, {"causal", AttrKind::Int, false}, {.name = "q_offset", .kind = AttrKind::Int, .required = false, .extent = true},
               {.name = "k_offset", .kind = AttrKind::Int, .required = false, .extent = true}},
              [](const ShapeCtx& c) {
                if (c.ival("causal", 0)) {
                  if (c.in[0].rank() < 2) c.fail("causal softmax needs [..., Sq, Sk]");
                  if (c.axis(c.ival("dim", -1), 0) != c.in[0].rank() - 1) c.fail("causal softmax runs over the last dim");
                }
                return std::vector<TensorType>{c.in[0]};
              },
              "exp(x - max) / sum exp(x - max) along dim; causal=1 (over the last dim of [..., Sq, Sk]): key j + "
              "k_offset is visible to query i + q_offset iff j + k_offset <= i + q_offset; hidden entries are 0 "
              "and excluded from max and sum"});
  r.add(OpDef{"log_softmax", 1, 1, {{"dim", AttrKind::Int, true}}, first, "x - max - log sum exp(x - max) along dim"});
  r.add(OpDef{"softmax_grad", 2, 2, {{"dim", AttrKind::Int, true}},
              [](const ShapeCtx& c) {
                expect_shape(c, 1, c.in[0].shape, "softmax_grad dy");
                return std::vector<TensorType>{c.in[0]};
              },
              "y * (dy - sum(dy * y)) along dim, operands (y, dy)"});
  r.add(OpDef{"rmsnorm", 2, 2, {{"eps", AttrKind::Float, true}}, norm_rule, "x * rsqrt(mean(x^2) + eps) * w over the last dim"});
  r.add(OpDef{"layernorm", 3, 3, {{"eps", AttrKind::Float, true}}, norm_rule, "(x - mean) * rsqrt(var + eps) * w + b"});
  r.add(OpDef{"rope", 3, 3, {}, rope_rule, "rotary embedding: (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos) per pair"});
  r.add(OpDef{"rope_grad", 3, 3, {}, rope_rule, "adjoint of rope: rotation by -angle"});
  r.add(OpDef{"swiglu", 2, 2, {},
              [](const ShapeCtx& c) {
                expect_shape(c, 1, c.in[0].shape, "swiglu up");
                return std::vector<TensorType>{c.in[0]};
              },
              "silu(gate) * up"});
  r.add(OpDef{"embedding", 2, 2, {{.name = "offset", .kind = AttrKind::Int, .required = false, .extent = true}}, embedding_rule,
              "table[ids - offset], zero rows for ids outside the table (vocab-parallel shards)"});
  r.add(OpDef{"embedding_grad", 2, 2, {{.name = "vocab", .kind = AttrKind::Int, .required = true, .extent = true}, {.name = "offset", .kind = AttrKind::Int, .required = false, .extent = true}}, embedding_grad_rule,
              "scatter-add of dy rows into [vocab, H] at ids - offset"});
  r.add(OpDef{"cross_entropy", 3, 3, {{"reduction", AttrKind::String, false}}, ce_rule,
              "masked token-mean (or sum) of logsumexp(logits) - logits[label], operands (logits, labels, mask)"});
  r.add(OpDef{"cross_entropy_grad", 4, 4, {{"reduction", AttrKind::String, false}}, ce_rule,
              "d loss / d logits, operands (logits, labels, mask, dloss)"});
  r.add(OpDef{"pick", 2, 2, {{.name = "offset", .kind = AttrKind::Int, .required = true, .extent = true}}, pick_rule,
              "logits[n, label[n] - offset] if in range else 0 (vocab-parallel label logit)"});
  r.add(OpDef{"one_hot", 1, 1, {{.name = "depth", .kind = AttrKind::Int, .required = true, .extent = true}, {.name = "offset", .kind = AttrKind::Int, .required = true, .extent = true}}, one_hot_rule,
              "1 where id - offset == j"});
  r.add(OpDef{"topk_mask", 1, 1, {{"k", AttrKind::Int, true}}, topk_rule, "1 at the k largest entries of the last dim, else 0"});
  r.add(OpDef{"adamw", 4, 4,
              {{"lr", AttrKind::Float, true}, {"beta1", AttrKind::Float, true}, {"beta2", AttrKind::Float, true},
               {"eps", AttrKind::Float, true}, {"weight_decay", AttrKind::Float, false}, {"step", AttrKind::Int, true}},
              optimizer_rule,
              "(p, g, m, v) -> (p', m', v'), bias-corrected AdamW with decoupled weight decay"});
  r.add(OpDef{"sgd_momentum", 3, 3,
              {{"lr", AttrKind::Float, true}, {"momentum", AttrKind::Float, true}, {"weight_decay", AttrKind::Float, false}},
              optimizer_rule, "(p, g, buf) -> (p', buf')"});
}

}  // namespace parity::ir
