#include "corpus/layers.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "ir/op_registry.h"
#include "ir/validate.h"

namespace parity::corpus {

// ---------------------------------------------------------------------------
// Emitter

struct Emitter::Env {
  std::set<std::string> names;
  ir::TypeMap types;  // every value of the program
  ir::Bindings b;     // dims and axis sizes
  std::optional<ir::Mesh> mesh;
  std::map<std::string, int64_t> loop_vars;
};

Emitter::Emitter(const ir::Bindings& b, const ir::Mesh* mesh)
    : own_(std::make_unique<ir::Graph>()), g_(own_.get()), env_(std::make_shared<Env>()) {
  env_->b = b;
  if (mesh) {
    env_->mesh = *mesh;
    for (const auto& a : mesh->axes) env_->b[a.name] = a.size;
  }
}

Emitter::Emitter(ir::Graph* g, std::shared_ptr<Env> env, Emitter* parent)
    : g_(g), env_(std::move(env)), parent_(parent) {}

Emitter::~Emitter() = default;

const ir::TensorType& Emitter::type(const std::string& v) const {
  auto it = env_->types.find(v);
  if (it == env_->types.end()) throw std::logic_error("emitter: no value '" + v + "'");
  return it->second;
}

const ir::Bindings& Emitter::bindings() const { return env_->b; }

std::string Emitter::unique(const std::string& want) {
  std::string n = want;
  for (int i = 1; env_->names.count(n); ++i) n = want + "." + std::to_string(i);
  env_->names.insert(n);
  return n;
}

std::string Emitter::input(const std::string& name, ir::DType dtype, const Shape& shape) {
  if (env_->names.count(name)) throw std::logic_error("emitter: input '" + name + "' defined twice");
  env_->names.insert(name);
  g_->inputs.push_back(name);
  g_->types[name] = type_of(dtype, shape);
  env_->types[name] = g_->types[name];
  return name;
}

ir::TensorType Emitter::type_of(ir::DType dtype, const Shape& shape) { return corpus::type(dtype, shape); }

void Emitter::infer(const ir::Op& op) {
  const ir::OpDef* def = ir::OpRegistry::get().find(op.kind);
  if (!def) throw std::logic_error("emitter: unknown op '" + op.kind + "'");
  if (op.kind == "loop") {
    for (size_t k = 0; k < op.results.size(); ++k) env_->types[op.results[k]] = type(op.operands[k]);
    return;
  }
  std::vector<ir::TensorType> in;
  for (const auto& o : op.operands) in.push_back(type(o));
  std::vector<ir::TensorType> res;
  try {
    ir::ShapeCtx ctx(op, in, env_->b, env_->mesh ? &*env_->mesh : nullptr, env_->loop_vars);
    res = def->rule(ctx);
  } catch (const ir::InvalidInput& e) {
    throw std::logic_error("emitter: " + op.label() + ": " + e.what());
  }
  for (size_t k = 0; k < op.results.size() && k < res.size(); ++k) env_->types[op.results[k]] = res[k];
}

std::vector<std::string> Emitter::op_n(const std::string& kind,
                                       const std::vector<std::string>& operands,
                                       const Attrs& attrs, const std::vector<std::string>& names) {
  ir::Op o;
  o.kind = kind;
  o.operands = operands;
  for (const auto& [name, v] : attrs) o.attrs[name] = v.value;
  for (const auto& n : names) o.results.push_back(unique(n));
  infer(o);
  g_->ops.push_back(std::move(o));
  return g_->ops.back().results;
}

std::string Emitter::op(const std::string& kind, const std::vector<std::string>& operands,
                        const Attrs& attrs, const std::string& name) {
  return op_n(kind, operands, attrs, {name})[0];
}

void Emitter::op0(const std::string& kind, const std::vector<std::string>& operands,
                  const Attrs& attrs) {
  op_n(kind, operands, attrs, {});
}

std::vector<std::string> Emitter::loop(
    const std::string& count, const std::string& var, const std::vector<std::string>& init,
    const std::vector<std::string>& names,
    const std::function<std::vector<std::string>(Emitter&, const std::vector<std::string>&)>&
        body) {
  ir::Graph region;
  int64_t n = ir::DimExpr::parse(count).eval(env_->b);
  env_->loop_vars[var] = n;
  Emitter be(&region, env_, this);
  std::vector<std::string> carried;
  for (size_t k = 0; k < init.size(); ++k) {
    std::string nm = unique(names[k] + ".acc");
    region.inputs.push_back(nm);
    region.types[nm] = type(init[k]);
    env_->types[nm] = type(init[k]);
    carried.push_back(nm);
  }
  std::vector<std::string> next = body(be, carried);
  region.outputs = next;
  env_->loop_vars.erase(var);
  ir::Op o;
  o.kind = "loop";
  o.operands = init;
  o.attrs["count"] = ir::DimExpr::parse(count);
  o.attrs["var"] = var;
  for (const auto& nm : names) o.results.push_back(unique(nm));
  o.regions.push_back(std::move(region));
  infer(o);
  g_->ops.push_back(std::move(o));
  return g_->ops.back().results;
}

namespace {
void defined_in(const ir::Graph& g, std::set<std::string>& out) {
  out.insert(g.inputs.begin(), g.inputs.end());
  for (const auto& op : g.ops) {
    out.insert(op.results.begin(), op.results.end());
    for (const auto& r : op.regions) defined_in(r, out);
  }
}
}  // namespace

std::map<std::string, std::string> Emitter::backward(const ir::GradRequest& req) {
  const ir::Mesh* mesh = env_->mesh ? &*env_->mesh : nullptr;
  size_t before = g_->ops.size();
  std::map<std::string, std::string> res;
  if (!parent_) {
    res = ir::append_backward(*g_, req, env_->b, mesh);
  } else {
    // A loop body reads enclosing values by name and its attributes may use
    // the loop variable: differentiate a standalone copy whose inputs are the
    // enclosing values it reads, with each loop variable posing as a mesh axis
    // so `$var` checks, then move the new ops back into the body.
    ir::Graph tmp;
    std::set<std::string> local;
    defined_in(*g_, local);
    std::set<std::string> outer;
    for (const auto& op : g_->ops)
      for (const auto& o : op.operands)
        if (!local.count(o)) outer.insert(o);
    for (const auto& w : req.wrt)
      if (!local.count(w)) outer.insert(w);
    for (const auto& [v, gname] : req.seeds)
      if (!local.count(gname)) outer.insert(gname);
    for (const auto& o : outer) {
      tmp.inputs.push_back(o);
      tmp.types[o] = type(o);
    }
    for (const auto& in : g_->inputs) {
      tmp.inputs.push_back(in);
      tmp.types[in] = type(in);
    }
    tmp.ops = g_->ops;
    ir::Mesh m = mesh ? *mesh : ir::Mesh{};
    for (const auto& [var, n] : env_->loop_vars) m.axes.push_back(ir::MeshAxis{var, n});
    res = ir::append_backward(tmp, req, env_->b, &m);
    for (size_t k = before; k < tmp.ops.size(); ++k) g_->ops.push_back(std::move(tmp.ops[k]));
  }
  for (size_t k = before; k < g_->ops.size(); ++k) {
    for (const auto& r : g_->ops[k].results) {
      if (env_->names.count(r)) throw std::logic_error("emitter: backward reuses name '" + r + "'");
      env_->names.insert(r);
    }
    infer(g_->ops[k]);
  }
  return res;
}

std::map<std::string, std::string> Emitter::backward_range(const ir::GradRequest& req,
                                                           size_t from, size_t to) {
  const ir::Mesh* mesh = env_->mesh ? &*env_->mesh : nullptr;
  ir::Graph tmp;
  tmp.ops.assign(g_->ops.begin() + static_cast<long>(from), g_->ops.begin() + static_cast<long>(to));
  std::set<std::string> local;
  for (const auto& op : tmp.ops) {
    local.insert(op.results.begin(), op.results.end());
    for (const auto& r : op.regions) defined_in(r, local);
  }
  std::set<std::string> outer;
  auto need = [&](const std::string& v) {
    if (local.count(v) || !outer.insert(v).second) return;
    tmp.inputs.push_back(v);
    tmp.types[v] = type(v);
  };
  std::function<void(const ir::Graph&)> uses = [&](const ir::Graph& g) {
    for (const auto& op : g.ops) {
      for (const auto& o : op.operands) need(o);
      for (const auto& r : op.regions) uses(r);
    }
  };
  uses(tmp);
  for (const auto& w : req.wrt) need(w);
  for (const auto& [v, gname] : req.seeds) need(gname);
  ir::Mesh m = mesh ? *mesh : ir::Mesh{};
  for (const auto& [var, n] : env_->loop_vars) m.axes.push_back(ir::MeshAxis{var, n});
  const size_t n = tmp.ops.size();
  auto res = ir::append_backward(tmp, req, env_->b, &m);
  // Names are unique per program, but append_backward only knows this range.
  std::map<std::string, std::string> renamed;
  for (size_t k = n; k < tmp.ops.size(); ++k) {
    ir::Op& op = tmp.ops[k];
    for (auto& o : op.operands)
      if (auto it = renamed.find(o); it != renamed.end()) o = it->second;
    for (auto& r : op.results) {
      std::string u = unique(r);
      if (u != r) renamed[r] = u;
      r = u;
    }
    infer(op);
    g_->ops.push_back(std::move(op));
  }
  for (auto& [v, gname] : res)
    if (auto it = renamed.find(gname); it != renamed.end()) gname = it->second;
  return res;
}

// ---------------------------------------------------------------------------
// Dim expressions

namespace {

bool simple(const std::string& x) {
  for (char ch : x)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '$')) return false;
  return true;
}
std::string par(const std::string& x) { return simple(x) ? x : "(" + x + ")"; }

}  // namespace

std::string dmul(const std::string& a, const std::string& b) {
  if (a == "1") return b;
  if (b == "1") return a;
  return par(a) + "*" + par(b);
}

std::string dadd(const std::string& a, const std::string& b) {
  if (a == "0") return b;
  if (b == "0") return a;
  return a + "+" + b;
}

std::string ddiv(const std::string& a, const std::string& b) {
  if (b == "1") return a;
  return par(a) + "/" + par(b);
}

// ---------------------------------------------------------------------------
// Ctx

int64_t Ctx::size(const std::string& axis) const {
  auto it = axes.find(axis);
  return it == axes.end() ? 1 : it->second;
}

std::string Ctx::split(const std::string& dim, const std::string& axis) const {
  return has(axis) ? ddiv(dim, axis) : dim;
}

std::string Ctx::at(const std::string& axis, const std::string& chunk) const {
  return has(axis) ? "$" + axis + "*" + par(chunk) : "0";
}

std::string Ctx::res_off() const {
  if (!sp) return s_off;
  if (s_off2.empty() || !has("tp")) return dadd(s_off, at("tp", split(s_size, "tp")));
  // Balanced CP: the local sequence is chunk s_off then chunk s_off2 (half
  // each); SP cuts it in tp pieces, tp even, so the first tp/2 pieces lie in
  // the first chunk and the others in the second: piece $tp sits at
  // s_off + j*piece, or s_off2 + j*piece, j = $tp mod tp/2.
  const std::string piece = res_size();
  if (size("tp") == 2) return "(1-$tp)*" + par(s_off) + "+$tp*" + par(s_off2);
  const std::string h = "($tp-$tp%(tp/2))/(tp/2)", j = "$tp%(tp/2)";
  return "(1-" + h + ")*" + par(s_off) + "+" + h + "*" + par(s_off2) + "+" + j + "*" + par(piece);
}
std::string Ctx::res_size() const { return sp ? split(s_size, "tp") : s_size; }
std::string Ctx::tokens() const { return dmul(b_size, s_size); }
std::string Ctx::res_tokens() const { return dmul(b_size, res_size()); }
std::string Ctx::half_chunk() const { return ddiv(s_size, "2"); }
std::string Ctx::key_len() const { return has("cp") ? "S" : s_size; }

void Ctx::mark(const std::string& value, const std::string& spec_value, const Region& r,
               std::vector<std::string> partial) {
  if (!plan) return;
  if (!s_off2.empty() && em)
    for (size_t d = 0; d < r.size(); ++d) {
      if (r[d].first != s_off || r[d].second != s_size) continue;
      // A region is one box: the two chunks of the local sequence get one each.
      // A partial sum is placed for the first chunk only: the verifier sums
      // a partial placement's addends by spec value, axes and the other
      // coordinates (not by region), so two chunks of one rank would be added
      // into one sum.
      const std::string half = half_chunk();
      for (int h = 0; h < (partial.empty() ? 2 : 1); ++h) {
        Region rh = r;
        rh[d] = {h ? s_off2 : s_off, half};
        std::string v = em->op("slice", {value},
                               {{"dim", static_cast<int>(d)}, {"offset", expr(h ? half : "0")}, {"size", expr(half)}},
                               value + ".chunk" + std::to_string(h));
        marks.push_back(Mark{v, spec_value, rh, partial});
      }
      return;
    }
  marks.push_back(Mark{value, spec_value, r, std::move(partial)});
}

Region Ctx::res_region(const std::string& last) const {
  return {{b_off, b_size}, {res_off(), res_size()}, {"0", last}};
}
Region Ctx::tok_region(const std::string& last) const {
  return {{b_off, b_size}, {s_off, s_size}, {"0", last}};
}
Region Ctx::tp_cols(const std::string& dim) const {
  return {{b_off, b_size}, {s_off, s_size}, {at("tp", split(dim, "tp")), split(dim, "tp")}};
}

double Ctx::dim(const std::string& name) const {
  return static_cast<double>(ir::DimExpr::parse(name).eval(dims));
}

// ---------------------------------------------------------------------------
// Attribute helpers

Attrs axes_attr(const std::vector<std::string>& axes, const char* reduce) {
  Attrs a = {{"axes", strings(axes)}};
  if (reduce) a.push_back({"reduce", reduce});
  return a;
}

namespace {

Attrs with(Attrs a, const Attrs& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::string lp(int64_t i) { return "l" + std::to_string(i) + "."; }

std::string reshape(Emitter& e, const std::string& x, const Shape& s, const std::string& name) {
  return e.op("reshape", {x}, {{"shape", ints(s)}}, name);
}
std::string transpose(Emitter& e, const std::string& x, const Shape& perm,
                      const std::string& name) {
  return e.op("transpose", {x}, {{"perm", ints(perm)}}, name);
}
std::string slice(Emitter& e, const std::string& x, int dim, const std::string& off,
                  const std::string& size, const std::string& name) {
  return e.op("slice", {x}, {{"dim", dim}, {"offset", expr(off)}, {"size", expr(size)}}, name);
}

// The name a value gets before a tensor-parallel exit (a partial sum).
std::string pre_exit(const Ctx& c, const std::string& name) {
  return c.has("tp") ? name + ".part" : name;
}

std::string norm(Emitter& e, Ctx& c, const std::string& x, const std::string& w,
                 const std::string& name) {
  const ModelConfig& m = *c.model;
  if (m.family == Family::gpt)
    return e.op("layernorm", {x, c.param(w + "_w"), c.param(w + "_b")}, {{"eps", m.norm_eps}},
                name);
  return e.op("rmsnorm", {x, c.param(w)}, {{"eps", m.norm_eps}}, name);
}

}  // namespace

std::string tp_enter(Emitter& e, Ctx& c, const std::string& x, int seq_dim,
                     const std::string& name) {
  if (!c.has("tp")) return x;
  if (c.sp)
    return e.op("allgather", {x}, with(axes_attr({"tp"}), {{"dim", seq_dim}}), name);
  return e.op("grad_allreduce", {x}, {{"grad_axes", strings({"tp"})}}, name);
}

std::string tp_exit(Emitter& e, Ctx& c, const std::string& x, int seq_dim,
                    const std::string& name) {
  if (!c.has("tp")) return x;
  if (c.sp)
    return e.op("reduce_scatter", {x}, with(axes_attr({"tp"}, "sum"), {{"dim", seq_dim}}), name);
  return e.op("allreduce", {x}, axes_attr({"tp"}, "sum"), name);
}

// ---------------------------------------------------------------------------
// Embedding

std::string embed(Emitter& e, Ctx& c, const Data& d) {
  const ModelConfig& m = *c.model;
  bool gpt = m.family == Family::gpt;
  std::string table = c.param(m.tied ? "wte" : "embed");
  std::string tok_name = gpt ? "embed.tok" : kEmbedOut;
  std::string x;
  if (c.has("tp")) {  // vocab-parallel: rows outside this shard contribute zeros
    std::string part =
        e.op("embedding", {table, d.tokens}, {{"offset", expr(c.at("tp", "V/tp"))}}, tok_name + ".part");
    c.mark(part, tok_name, c.tok_region("H"), {"tp"});
    x = tp_exit(e, c, part, 1, tok_name);
  } else {
    x = e.op("embedding", {table, d.tokens}, {}, tok_name);
  }
  if (gpt) {
    c.mark(x, tok_name, c.res_region("H"));
    std::string pos = c.param("wpe");
    if (!c.s_off2.empty()) {
      pos = e.op("concat",
                 {slice(e, pos, 0, c.s_off, c.half_chunk(), "embed.pos0"),
                  slice(e, pos, 0, c.s_off2, c.half_chunk(), "embed.pos1")},
                 {{"dim", 0}}, c.sp && c.has("tp") ? "embed.pos_local" : "embed.pos");
      if (c.sp && c.has("tp"))  // this rank's SP piece of the two chunks
        pos = slice(e, pos, 0, c.at("tp", c.res_size()), c.res_size(), "embed.pos");
    } else if (c.res_off() != "0" || c.res_size() != "S")
      pos = slice(e, pos, 0, c.res_off(), c.res_size(), "embed.pos");
    x = e.op("add", {x, pos}, {}, kEmbedOut);
  }
  c.mark(x, kEmbedOut, c.res_region("H"));
  c.boundaries.push_back({x, kEmbedOut});
  return x;
}

// ---------------------------------------------------------------------------
// Attention

namespace {

std::string softmax_causal(Emitter& e, Ctx& c, const std::string& x, const std::string& name) {
  Attrs a = {{"dim", -1}, {"causal", 1}};
  if (!c.s_off2.empty()) {
    // Balanced CP: the local queries are two chunks at different positions,
    // each masked with its own offset.
    const int qd = static_cast<int>(e.type(x).shape.size()) - 2;
    const std::string half = c.half_chunk();
    std::vector<std::string> parts;
    for (int h = 0; h < 2; ++h) {
      std::string q = slice(e, x, qd, h ? half : "0", half, name + ".q" + std::to_string(h));
      Attrs ah = a;
      ah.push_back({"q_offset", expr(h ? c.s_off2 : c.s_off)});
      parts.push_back(e.op("softmax", {q}, ah, name + ".h" + std::to_string(h)));
    }
    return e.op("concat", parts, {{"dim", qd}}, name);
  }
  if (c.s_off != "0") a.push_back({"q_offset", expr(c.s_off)});
  return e.op("softmax", {x}, a, name);
}

// Keys or values of the whole sequence from every cp rank's chunk, in
// sequence order (balanced CP gathers chunks i, 2cp-1-i per rank: reorder).
std::string cp_gather(Emitter& e, Ctx& c, const std::string& x, int dim, const std::string& name) {
  std::string all = e.op("allgather", {x}, with(axes_attr({"cp"}), {{"dim", dim}}),
                         c.s_off2.empty() ? name : name + ".ranked");
  if (c.s_off2.empty()) return all;
  const int64_t n = c.size("cp");
  const std::string half = c.half_chunk();
  std::vector<std::string> parts;
  for (int64_t j = 0; j < 2 * n; ++j) {
    int64_t pos = j < n ? 2 * j : 2 * (2 * n - 1 - j) + 1;  // where chunk j sits in rank order
    parts.push_back(slice(e, all, dim, pos ? dmul(std::to_string(pos), half) : "0", half,
                          name + ".c" + std::to_string(j)));
  }
  return e.op("concat", parts, {{"dim", dim}}, name);
}

// Multi-head attention with grouped KV heads (GPT: KV = NH) and, for Llama, RoPE.
std::string attention_gqa(Emitter& e, Ctx& c, int64_t i, const std::string& x, const Data& d) {
  const ModelConfig& m = *c.model;
  const std::string p = lp(i);
  bool rope = m.family != Family::gpt;
  std::string h = norm(e, c, x, p + "attn_norm", p + "attn.norm");
  c.mark(h, p + "attn.norm", c.res_region("H"));
  std::string in = tp_enter(e, c, h, 1, p + "attn.in");
  const std::string b = c.b_size, s = c.s_size, sk = c.key_len();
  const std::string kv = c.split("KV", "tp"), g = "NH/KV";
  std::string q = e.op("matmul", {in, c.param(p + "wq")}, {}, p + "attn.q");
  std::string k = e.op("matmul", {in, c.param(p + "wk")}, {}, p + "attn.k");
  std::string v = e.op("matmul", {in, c.param(p + "wv")}, {}, p + "attn.v");
  c.mark(q, p + "attn.q", c.tp_cols("NH*D"));
  c.mark(v, p + "attn.v", c.tp_cols("KV*D"));
  q = transpose(e, reshape(e, q, {b, s, kv, g, "D"}, p + "attn.q5"), {"0", "2", "3", "1", "4"},
                p + "attn.qt");
  k = transpose(e, reshape(e, k, {b, s, kv, "D"}, p + "attn.k4"), {"0", "2", "1", "3"},
                p + "attn.kt");
  v = transpose(e, reshape(e, v, {b, s, kv, "D"}, p + "attn.v4"), {"0", "2", "1", "3"},
                p + "attn.vt");
  const std::pair<std::string, std::string> kvr = {c.at("tp", kv), kv};
  if (rope) {
    q = e.op("rope", {q, d.cos, d.sin}, {}, p + "attn.q_rope");
    k = e.op("rope", {k, d.cos, d.sin}, {}, p + "attn.k_rope");
    c.mark(q, p + "attn.q_rope", {{c.b_off, b}, kvr, {"0", g}, {c.s_off, s}, {"0", "D"}});
    c.mark(k, p + "attn.k_rope", {{c.b_off, b}, kvr, {c.s_off, s}, {"0", "D"}});
  }
  if (c.has("cp")) {  // every query chunk attends to the whole (causally visible) sequence
    k = cp_gather(e, c, k, 2, p + "attn.k_all");
    v = cp_gather(e, c, v, 2, p + "attn.v_all");
  }
  std::string k5 = reshape(e, k, {b, kv, "1", sk, "D"}, p + "attn.k5");
  std::string v5 = reshape(e, v, {b, kv, "1", sk, "D"}, p + "attn.v5");
  std::string sc = e.op("matmul", {q, k5}, {{"transpose_b", 1}}, p + "attn.scores");
  sc = e.op("scale", {sc}, {{"factor", 1.0 / std::sqrt(c.dim("D"))}}, p + "attn.scaled");
  std::string pr = softmax_causal(e, c, sc, p + "attn.probs");
  c.mark(pr, p + "attn.probs", {{c.b_off, b}, kvr, {"0", g}, {c.s_off, s}, {"0", "S"}});
  std::string o = e.op("matmul", {pr, v5}, {}, p + "attn.ctx");
  o = transpose(e, o, {"0", "3", "1", "2", "4"}, p + "attn.ctx_t");
  o = reshape(e, o, {b, s, dmul(c.split("NH", "tp"), "D")}, p + "attn.merged");
  c.mark(o, p + "attn.merged", c.tp_cols("NH*D"));
  std::string out = e.op("matmul", {o, c.param(p + "wo")}, {}, pre_exit(c, p + "attn.out"));
  if (c.has("tp")) c.mark(out, p + "attn.out", c.tok_region("H"), {"tp"});
  out = tp_exit(e, c, out, 1, p + "attn.out");
  std::string r = e.op("add", {x, out}, {}, p + "attn.res");
  c.mark(r, p + "attn.res", c.res_region("H"));
  c.boundaries.push_back({r, p + "attn.res"});
  return r;
}

// DeepSeek-V3 multi-head latent attention: low-rank q and kv projections (the
// down projections replicated over tp, the up projections column-parallel), a
// decoupled RoPE part shared by all heads.
std::string attention_mla(Emitter& e, Ctx& c, int64_t i, const std::string& x, const Data& d) {
  const std::string p = lp(i);
  std::string h = norm(e, c, x, p + "attn_norm", p + "attn.norm");
  c.mark(h, p + "attn.norm", c.res_region("H"));
  const std::string b = c.b_size, s = c.s_size, sr = c.res_size(), sk = c.key_len();
  const std::string nh = c.split("NH", "tp");
  const std::pair<std::string, std::string> hr = {c.at("tp", nh), nh};
  // Queries.
  std::string cq = e.op("matmul", {h, c.param(p + "wdq")}, {}, p + "attn.cq");
  cq = e.op("rmsnorm", {cq, c.param(p + "q_norm")}, {{"eps", c.model->norm_eps}}, p + "attn.cq_norm");
  c.mark(cq, p + "attn.cq_norm", c.res_region("QL"));
  std::string cqi = tp_enter(e, c, cq, 1, p + "attn.cq_in");
  std::string q = e.op("matmul", {cqi, c.param(p + "wuq")}, {}, p + "attn.q");
  q = transpose(e, reshape(e, q, {b, s, nh, "DN+DR"}, p + "attn.q4"), {"0", "2", "1", "3"},
                p + "attn.qt");
  std::string qn = slice(e, q, 3, "0", "DN", p + "attn.q_nope");
  std::string qp = slice(e, q, 3, "DN", "DR", p + "attn.q_pe");
  qp = e.op("rope", {qp, d.cos, d.sin}, {}, p + "attn.q_rope");
  q = e.op("concat", {qn, qp}, {{"dim", 3}}, p + "attn.q_full");
  c.mark(q, p + "attn.q_full", {{c.b_off, b}, hr, {c.s_off, s}, {"0", "DN+DR"}});
  // Keys and values from the compressed latent.
  std::string ckv = e.op("matmul", {h, c.param(p + "wdkv")}, {}, p + "attn.ckv");
  std::string lat = slice(e, ckv, 2, "0", "KVL", p + "attn.c");
  std::string kpe = slice(e, ckv, 2, "KVL", "DR", p + "attn.k_pe_raw");
  lat = e.op("rmsnorm", {lat, c.param(p + "kv_norm")}, {{"eps", c.model->norm_eps}},
             p + "attn.c_norm");
  c.mark(lat, p + "attn.c_norm", c.res_region("KVL"));
  lat = tp_enter(e, c, lat, 1, p + "attn.c_in");
  // The shared RoPE key: rotated before it enters the tp region, so its
  // gradient is complete (all-reduced over the heads' shards) before rope_grad.
  kpe = reshape(e, kpe, {b, "1", sr, "DR"}, p + "attn.k_pe4");
  std::string cs = d.cos, sn = d.sin;
  if (c.sp) {  // this rank's sub-chunk of the positions
    const std::string off = c.at("tp", sr);
    cs = slice(e, cs, 0, off, sr, p + "attn.cos_sp");
    sn = slice(e, sn, 0, off, sr, p + "attn.sin_sp");
  }
  kpe = e.op("rope", {kpe, cs, sn}, {}, p + "attn.k_rope");
  c.mark(kpe, p + "attn.k_rope", {{c.b_off, b}, {"0", "1"}, {c.res_off(), sr}, {"0", "DR"}});
  kpe = tp_enter(e, c, kpe, 2, p + "attn.k_rope_in");
  // Up-project this chunk's keys and values, then gather them over cp (so each
  // weight gradient sums complete per-token gradients).
  std::string kv = e.op("matmul", {lat, c.param(p + "wukv")}, {}, p + "attn.kv");
  kv = transpose(e, reshape(e, kv, {b, s, nh, "DN+DV"}, p + "attn.kv4"), {"0", "2", "1", "3"},
                 p + "attn.kvt");
  std::string kn = slice(e, kv, 3, "0", "DN", p + "attn.k_nope");
  std::string v = slice(e, kv, 3, "DN", "DV", p + "attn.v");
  c.mark(v, p + "attn.v", {{c.b_off, b}, hr, {c.s_off, s}, {"0", "DV"}});
  if (c.has("cp")) {
    kn = cp_gather(e, c, kn, 2, p + "attn.k_nope_all");
    v = cp_gather(e, c, v, 2, p + "attn.v_all");
    kpe = cp_gather(e, c, kpe, 2, p + "attn.k_rope_all");
  }
  std::string kb = e.op("broadcast_to", {kpe}, {{"shape", ints({b, nh, sk, "DR"})}}, p + "attn.k_pe_b");
  std::string k = e.op("concat", {kn, kb}, {{"dim", 3}}, p + "attn.k_full");
  std::string sc = e.op("matmul", {q, k}, {{"transpose_b", 1}}, p + "attn.scores");
  sc = e.op("scale", {sc}, {{"factor", 1.0 / std::sqrt(c.dim("DN+DR"))}}, p + "attn.scaled");
  std::string pr = softmax_causal(e, c, sc, p + "attn.probs");
  c.mark(pr, p + "attn.probs", {{c.b_off, b}, hr, {c.s_off, s}, {"0", "S"}});
  std::string o = e.op("matmul", {pr, v}, {}, p + "attn.ctx");
  o = transpose(e, o, {"0", "2", "1", "3"}, p + "attn.ctx_t");
  o = reshape(e, o, {b, s, dmul(nh, "DV")}, p + "attn.merged");
  std::string out = e.op("matmul", {o, c.param(p + "wo")}, {}, pre_exit(c, p + "attn.out"));
  if (c.has("tp")) c.mark(out, p + "attn.out", c.tok_region("H"), {"tp"});
  out = tp_exit(e, c, out, 1, p + "attn.out");
  std::string r = e.op("add", {x, out}, {}, p + "attn.res");
  c.mark(r, p + "attn.res", c.res_region("H"));
  c.boundaries.push_back({r, p + "attn.res"});
  return r;
}

// ---------------------------------------------------------------------------
// MLP and MoE

// A dense FFN on `h` (residual layout): SwiGLU, or GELU for GPT. Column- then
// row-parallel over tp. `w` prefixes the weight names.
std::string ffn(Emitter& e, Ctx& c, const std::string& h, const std::string& w,
                const std::string& name, const std::string& fdim) {
  const ModelConfig& m = *c.model;
  std::string in = tp_enter(e, c, h, 1, name + ".in");
  std::string a;
  if (m.family == Family::gpt) {
    std::string f1 = e.op("matmul", {in, c.param(w + "fc1")}, {}, name + ".fc1");
    a = e.op("gelu", {f1}, {}, name + ".act");
  } else {
    std::string gate = e.op("matmul", {in, c.param(w + "w_gate")}, {}, name + ".gate");
    std::string up = e.op("matmul", {in, c.param(w + "w_up")}, {}, name + ".up");
    a = e.op("swiglu", {gate, up}, {}, name + ".act");
  }
  c.mark(a, name + ".act", c.tp_cols(fdim));
  std::string down = m.family == Family::gpt ? w + "fc2" : w + "w_down";
  std::string out = e.op("matmul", {a, c.param(down)}, {}, pre_exit(c, name + ".out"));
  if (c.has("tp")) c.mark(out, name + ".out", c.tok_region("H"), {"tp"});
  return tp_exit(e, c, out, 1, name + ".out");
}

// DeepSeek-V3 MoE: sigmoid router, top-k selection, gates normalized over the
// selected experts; every expert runs on every token and the gates (zero for
// unselected experts) weight the combination, which equals sparse dispatch.
// Under EP the experts are split over ep and tokens travel by all-to-all.
std::string moe(Emitter& e, Ctx& c, const std::string& p, const std::string& h) {
  const ModelConfig& m = *c.model;
  const std::string b = c.b_size, sr = c.res_size(), n = c.res_tokens();
  std::string rl = e.op("matmul", {h, c.param(p + "router")}, {}, p + "moe.logits");
  std::string sc = e.op("sigmoid", {rl}, {}, p + "moe.scores");
  std::string sel = e.op("topk_mask", {sc}, {{"k", m.topk}}, p + "moe.select");
  std::string gs = e.op("mul", {sc, sel}, {}, p + "moe.selected");
  std::string den = e.op("reduce_sum", {gs}, {{"dims", ints({"2"})}, {"keepdim", 1}}, p + "moe.den");
  std::string gates = e.op("div", {gs, den}, {}, p + "moe.gates_norm");
  gates = e.op("scale", {gates}, {{"factor", m.route_scale}}, p + "moe.gates");
  c.mark(gates, p + "moe.gates", c.res_region("E"));
  std::string tok = reshape(e, h, {"1", n, "H"}, p + "moe.tokens");
  std::string xe = e.op("broadcast_to", {tok}, {{"shape", ints({"E", n, "H"})}}, p + "moe.dispatch");
  if (c.has("ep"))  // expert j's rows go to the rank holding it; tokens concatenate
    xe = e.op("all_to_all", {xe}, with(axes_attr({"ep"}), {{"split_dim", 0}, {"concat_dim", 1}}),
              p + "moe.expert_in");
  std::string eg = e.op("matmul", {xe, c.param(p + "e_gate")}, {}, p + "moe.e_gate");
  std::string eu = e.op("matmul", {xe, c.param(p + "e_up")}, {}, p + "moe.e_up");
  std::string ea = e.op("swiglu", {eg, eu}, {}, p + "moe.e_act");
  std::string eo = e.op("matmul", {ea, c.param(p + "e_down")}, {}, p + "moe.e_out");
  if (c.has("ep"))
    eo = e.op("all_to_all", {eo}, with(axes_attr({"ep"}), {{"split_dim", 1}, {"concat_dim", 0}}),
              p + "moe.expert_back");
  std::string gt = reshape(e, gates, {n, "E"}, p + "moe.gates2");
  gt = transpose(e, gt, {"1", "0"}, p + "moe.gates_t");
  gt = reshape(e, gt, {"E", n, "1"}, p + "moe.gates_e");
  std::string wsum = e.op("mul", {eo, gt}, {}, p + "moe.weighted");
  std::string y = e.op("reduce_sum", {wsum}, {{"dims", ints({"0"})}}, p + "moe.routed2");
  y = reshape(e, y, {b, sr, "H"}, p + "moe.routed");
  c.mark(y, p + "moe.routed", c.res_region("H"));
  std::string sh = ffn(e, c, h, p + "s_", p + "moe.shared", "FE");
  return e.op("add", {y, sh}, {}, p + "mlp.out");
}

}  // namespace

std::string layer(Emitter& e, Ctx& c, int64_t i, const std::string& x, const Data& d) {
  const ModelConfig& m = *c.model;
  const std::string p = lp(i);
  std::string r = m.mla() ? attention_mla(e, c, i, x, d) : attention_gqa(e, c, i, x, d);
  std::string h = norm(e, c, r, p + "mlp_norm", p + "mlp.norm");
  c.mark(h, p + "mlp.norm", c.res_region("H"));
  std::string out = m.moe_layer(i) ? moe(e, c, p, h) : ffn(e, c, h, p, p + "mlp", "F");
  c.mark(out, p + "mlp.out", c.res_region("H"));
  std::string y = e.op("add", {r, out}, {}, layer_out_name(i));
  c.mark(y, layer_out_name(i), c.res_region("H"));
  c.boundaries.push_back({y, layer_out_name(i)});
  return y;
}

// ---------------------------------------------------------------------------
// Head and losses

std::string head_logits(Emitter& e, Ctx& c, const std::string& x) {
  const ModelConfig& m = *c.model;
  std::string h = norm(e, c, x, "final_norm", "head.norm");
  c.mark(h, "head.norm", c.res_region("H"));
  std::string in = tp_enter(e, c, h, 1, "head.in");
  std::string l = m.tied ? e.op("matmul", {in, c.param("wte")}, {{"transpose_b", 1}}, "head.logits3")
                         : e.op("matmul", {in, c.param("head")}, {}, "head.logits3");
  c.mark(l, "head.logits3", c.tp_cols("V"));
  return reshape(e, l, {c.tokens(), c.split("V", "tp")}, "head.logits");
}

std::string spec_loss(Emitter& e, Ctx& c, const std::string& logits, const Data& d) {
  std::string lab = reshape(e, d.labels, {c.tokens()}, "loss.labels");
  std::string msk = reshape(e, d.mask, {c.tokens()}, "loss.mask");
  return e.op("cross_entropy", {logits, lab, msk}, {{"reduction", "mean"}}, kLoss);
}

PlanLoss plan_loss(Emitter& e, Ctx& c, const std::string& logits, const Data& d,
                   const std::string& inv_count) {
  const std::string n = c.tokens();
  std::string lab = reshape(e, d.labels, {n}, "loss.labels");
  std::string msk = reshape(e, d.mask, {n}, "loss.mask");
  if (!c.has("tp")) {
    std::string ce = e.op("cross_entropy", {logits, lab, msk}, {{"reduction", "sum"}}, "loss.ce_sum");
    return PlanLoss{ce, ce, inv_count};
  }
  // Vocab-parallel cross-entropy from primitives: the row max and the sum of
  // exponentials are reduced over tp, and the label's logit is picked on the
  // shard that holds it.
  const std::string off = c.at("tp", "V/tp");
  std::string mx = e.op("reduce_max", {logits}, {{"dims", ints({"1"})}, {"keepdim", 1}}, "loss.max_local");
  mx = e.op("allreduce", {mx}, axes_attr({"tp"}, "max"), "loss.max");
  std::string sh = e.op("sub", {logits, mx}, {}, "loss.shifted");
  std::string ex = e.op("exp", {sh}, {}, "loss.exp");
  std::string se = e.op("reduce_sum", {ex}, {{"dims", ints({"1"})}, {"keepdim", 1}}, "loss.sumexp_local");
  se = e.op("allreduce", {se}, axes_attr({"tp"}, "sum"), "loss.sumexp");
  std::string lse = e.op("add", {mx, e.op("log", {se}, {}, "loss.logsum")}, {}, "loss.lse");
  lse = reshape(e, lse, {n}, "loss.lse1");
  std::string pk = e.op("pick", {logits, lab}, {{"offset", expr(off)}}, "loss.picked_local");
  pk = e.op("allreduce", {pk}, axes_attr({"tp"}, "sum"), "loss.picked");
  std::string tl = e.op("sub", {lse, pk}, {}, "loss.token");
  std::string mf = e.op("cast", {msk}, {{"dtype", "f32"}}, "loss.maskf");
  std::string ce = e.op("reduce_sum", {e.op("mul", {tl, mf}, {}, "loss.masked")},
                        {{"dims", ints({"0"})}}, "loss.ce_sum");
  // Its gradient, written out as Megatron does: (softmax - onehot) * mask / count.
  std::string pr = e.op("div", {ex, se}, {}, "loss.softmax");
  std::string oh = e.op("one_hot", {lab}, {{"depth", expr(c.split("V", "tp"))}, {"offset", expr(off)}},
                        "loss.onehot");
  std::string diff = e.op("sub", {pr, oh}, {}, "loss.diff");
  std::string f = e.op("mul", {reshape(e, mf, {n, "1"}, "loss.mask2"), inv_count}, {}, "loss.weight");
  std::string dl = e.op("mul", {f, diff}, {}, "loss.dlogits");
  return PlanLoss{ce, logits, dl};
}

// ---------------------------------------------------------------------------
// Clipping and AdamW

std::string global_norm(Emitter& e, const std::vector<std::pair<std::string, std::string>>& grads,
                        const std::map<std::string, std::vector<std::string>>& distinct_axes,
                        const std::vector<std::string>& total_axes,
                        std::map<std::string, std::string>* sumsq) {
  // Squared norms of shards that differ across some axes are summed over them;
  // replicas are counted once.
  std::map<std::vector<std::string>, std::vector<std::string>> groups;
  for (const auto& [p, g] : grads) {
    std::string sq = e.op("pow", {g}, {{"exponent", 2.0}}, "clip.sq." + p);
    Shape all;
    for (size_t k = 0; k < e.type(g).rank(); ++k) all.push_back(std::to_string(k));
    std::string s = e.op("reduce_sum", {sq}, {{"dims", ints(all)}}, "clip.sumsq." + p);
    if (sumsq) (*sumsq)[p] = s;
    auto it = distinct_axes.find(p);
    groups[it == distinct_axes.end() ? std::vector<std::string>{} : it->second].push_back(s);
  }
  std::string total;
  for (const auto& [axes, parts] : groups) {
    std::string s = parts[0];
    for (size_t k = 1; k < parts.size(); ++k) s = e.op("add", {s, parts[k]}, {}, "clip.partial");
    if (!axes.empty()) s = e.op("allreduce", {s}, axes_attr(axes, "sum"), "clip.group");
    total = total.empty() ? s : e.op("add", {total, s}, {}, "clip.total");
  }
  if (!total_axes.empty()) total = e.op("allreduce", {total}, axes_attr(total_axes, "sum"), "clip.all");
  return e.op("sqrt", {total}, {}, kGradNorm);
}

std::string clip_coef(Emitter& e, const std::string& norm, const StepConsts& k) {
  std::string d = e.op("add_scalar", {norm}, {{"value", k.clip_eps}}, "clip.denom");
  std::string r = e.op("reciprocal", {d}, {}, "clip.inv");
  std::string want = e.op("scale", {r}, {{"factor", k.clip}}, "clip.want");
  std::string one = e.op("fill", {}, {{"value", 1.0}, {"shape", ints({})}}, "clip.one");
  return e.op("minimum", {one, want}, {}, "clip.coef");
}

std::vector<std::string> adamw(Emitter& e, const std::string& p, const std::string& g,
                               const std::string& m, const std::string& v,
                               const std::vector<std::string>& names, const StepConsts& k) {
  return e.op_n("adamw", {p, g, m, v},
                {{"lr", k.lr},
                 {"beta1", k.beta1},
                 {"beta2", k.beta2},
                 {"eps", k.eps},
                 {"weight_decay", k.weight_decay},
                 {"step", k.step}},
                names);
}

}  // namespace parity::corpus
