// Reverse-mode autodiff (see autodiff.h; docs/autodiff.md lists every rule).
// Adjoints are written with existing ops only, and each emitted op goes through
// its shape rule as it is emitted: a rule that cannot be expressed fails naming
// the forward op instead of producing a graph that does not check.
#include "ir/autodiff.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <set>
#include <stdexcept>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/semantics.h"
#include "ir/validate.h"

namespace parity::ir {

namespace {

const std::map<std::string, int64_t> kNoLoopVars;

Dims dims_of(const std::vector<int64_t>& v) {
  Dims d;
  for (int64_t x : v) d.push_back(DimExpr(x));
  return d;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

// Every name defined or declared anywhere in `g`, loop bodies included.
void collect_names(const Graph& g, std::set<std::string>& out) {
  out.insert(g.inputs.begin(), g.inputs.end());
  for (const auto& [n, t] : g.types) out.insert(n);
  for (const auto& op : g.ops) {
    out.insert(op.results.begin(), op.results.end());
    for (const auto& r : op.regions) collect_names(r, out);
  }
}

// Values read anywhere inside `g` (a loop body sees enclosing values by name).
void collect_uses(const Graph& g, std::set<std::string>& out) {
  for (const auto& op : g.ops) {
    out.insert(op.operands.begin(), op.operands.end());
    for (const auto& r : op.regions) collect_uses(r, out);
  }
}

bool has_p2p(const Graph& g) {
  for (const auto& op : g.ops) {
    if (op.kind == "send" || op.kind == "recv") return true;
    for (const auto& r : op.regions)
      if (has_p2p(r)) return true;
  }
  return false;
}

// The operands a gradient flows to. The others (ids, labels, masks, conditions,
// rotation tables, top-k scores) are treated as constants: they are integers,
// or piecewise constant, or inputs that no parameter feeds in a training step.
std::vector<bool> differentiable(const Op& op) {
  const std::string& k = op.kind;
  std::vector<bool> d(op.operands.size(), true);
  auto only = [&](std::initializer_list<size_t> idx) {
    std::fill(d.begin(), d.end(), false);
    for (size_t i : idx)
      if (i < d.size()) d[i] = true;
  };
  if (k == "where") {
    only({1, 2});
  } else if (k == "rope" || k == "rope_grad" || k == "embedding" || k == "cross_entropy" ||
             k == "pick") {
    only({0});
  } else if (k == "embedding_grad") {
    only({1});
  } else if (k == "topk_mask" || k == "one_hot") {
    only({});
  }
  return d;
}

class Backward {
 public:
  Backward(Graph& g, const GradRequest& req, const Bindings& b, const Mesh* mesh)
      : g_(g), req_(req), b_(b), mesh_(mesh) {}

  std::map<std::string, std::string> run() {
    DiagList diags;
    types_ = check_graph(g_, b_, mesh_, Diag{}, diags);
    if (!diags.empty())
      throw InvalidInput("append_backward: the forward graph does not check: " +
                         diags.items[0].str());
    collect_names(g_, taken_);
    std::set<std::string> top(g_.inputs.begin(), g_.inputs.end());
    for (const auto& op : g_.ops) top.insert(op.results.begin(), op.results.end());
    for (const auto& w : req_.wrt) {
      if (!top.count(w))
        throw InvalidInput("append_backward: wrt value '" + w +
                           "' is not an input or a top-level value of the graph");
      if (!is_float(types_.at(w).dtype))
        throw InvalidInput("append_backward: wrt value '" + w + "' is " + types_.at(w).str() +
                           ": integer values have no gradient");
    }
    mark_active();
    seed(top);
    for (size_t i = g_.ops.size(); i-- > 0;) {
      cur_ = &g_.ops[i];
      step(g_.ops[i]);
    }
    cur_ = nullptr;
    std::map<std::string, std::string> result;
    for (const auto& w : req_.wrt)
      if (!grad_.count(w)) grad_[w] = zeros(w, req_.prefix + w);
    rename();
    for (const auto& w : req_.wrt) result[w] = grad_.at(w);
    for (auto& op : out_) g_.ops.push_back(std::move(op));
    return result;
  }

 private:
  // --- bookkeeping -------------------------------------------------------

  const TensorType& type(const std::string& v) const { return types_.at(v); }
  std::vector<int64_t> conc(const std::string& v) const { return concrete_shape(type(v), b_); }
  size_t rank(const std::string& v) const { return type(v).rank(); }
  std::string pg(const std::string& v) const { return req_.prefix + v; }

  [[noreturn]] void no_adjoint(const std::string& why = "") const {
    throw InvalidInput(Diag{"", "", cur_ ? cur_->label() : "", "",
                            "no adjoint for op '" + (cur_ ? cur_->kind : std::string("?")) + "'" +
                                (why.empty() ? "" : ": " + why)});
  }

  // Values that depend on a wrt value (or on a received value, whose gradient
  // goes back to the sender), through differentiable operands.
  void mark_active() {
    active_.insert(req_.wrt.begin(), req_.wrt.end());
    for (const auto& op : g_.ops) {
      bool act = false;
      if (op.kind == "recv") {
        act = true;
      } else {
        auto d = differentiable(op);
        for (size_t i = 0; i < op.operands.size(); ++i)
          act |= d[i] && active_.count(op.operands[i]) && is_float(type(op.operands[i]).dtype);
        if (!op.regions.empty()) {
          std::set<std::string> uses;
          for (const auto& r : op.regions) collect_uses(r, uses);
          for (const auto& u : uses) act |= active_.count(u) > 0;
        }
      }
      if (act)
        for (const auto& r : op.results)
          if (is_float(type(r).dtype)) active_.insert(r);
    }
  }

  void seed(const std::set<std::string>& top) {
    if (!req_.seeds.empty()) {
      for (const auto& [v, gname] : req_.seeds) {
        if (!top.count(v))
          throw InvalidInput("append_backward: seeded value '" + v + "' is not defined");
        if (!types_.count(gname))
          throw InvalidInput("append_backward: seed gradient '" + gname + "' of '" + v +
                             "' is not defined in the graph");
        if (conc(v) != conc(gname))
          throw InvalidInput("append_backward: seed gradient '" + gname + "' has shape " +
                             shape_str(conc(gname)) + ", the value '" + v + "' " +
                             shape_str(conc(v)));
        grad_[v] = gname;
      }
      return;
    }
    if (req_.loss.empty()) return;  // only received gradients (a non-last pipeline stage)
    if (!top.count(req_.loss))
      throw InvalidInput("append_backward: loss '" + req_.loss + "' is not defined");
    if (!is_float(type(req_.loss).dtype))
      throw InvalidInput("append_backward: loss '" + req_.loss + "' is not a float value");
    // d loss / d loss = 1 (a non-scalar loss is differentiated as the sum of its elements).
    const TensorType& t = type(req_.loss);
    grad_[req_.loss] =
        emit("fill", {},
             {{"value", 1.0}, {"shape", t.shape}, {"dtype", std::string(dtype_name(t.dtype))}},
             pg(req_.loss));
  }

  // Emits one backward op, runs its shape rule, and returns its (temporary) result.
  std::string emit(const std::string& kind, std::vector<std::string> operands, AttrMap attrs,
                   const std::string& base) {
    Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.attrs = std::move(attrs);
    std::string name;
    if (kind != "send") {
      do name = "%t" + std::to_string(tmp_++);
      while (taken_.count(name));
      op.results = {name};
    }
    const OpDef* def = OpRegistry::get().find(kind);
    std::vector<TensorType> in;
    for (const auto& o : op.operands) in.push_back(type(o));
    std::vector<TensorType> res;
    try {
      ShapeCtx ctx(op, in, b_, mesh_, kNoLoopVars);
      res = def->rule(ctx);
    } catch (const InvalidInput& e) {
      throw InvalidInput(Diag{"", "", cur_ ? cur_->label() : "", "",
                              "cannot express the adjoint with '" + kind + "': " + e.what()});
    }
    if (!name.empty()) {
      types_[name] = res.at(0);
      base_[name] = base;
      order_.push_back(name);
    }
    out_.push_back(std::move(op));
    return name;
  }

  std::string zeros(const std::string& like, const std::string& base) {
    const TensorType& t = type(like);
    return emit("fill", {},
                {{"value", 0.0}, {"shape", t.shape}, {"dtype", std::string(dtype_name(t.dtype))}},
                base);
  }

  // Adds a gradient contribution to `v` (values used more than once sum theirs).
  void accumulate(const std::string& v, std::string g) {
    if (type(g).dtype != type(v).dtype)
      g = emit("cast", {g}, {{"dtype", std::string(dtype_name(type(v).dtype))}}, pg(v));
    if (conc(g) != conc(v))
      throw std::logic_error("append_backward: gradient of '" + v + "' from '" +
                             (cur_ ? cur_->label() : "") + "' has shape " + shape_str(conc(g)) +
                             ", the value " + shape_str(conc(v)));
    auto it = grad_.find(v);
    if (it == grad_.end())
      grad_[v] = g;
    else
      it->second = emit("add", {it->second, g}, {}, pg(v));
  }

  // Sums `g` over the dims along which `v` was broadcast (numpy rules: missing
  // leading dims and size-1 dims), so the result has the shape of `v`.
  std::string unbroadcast(const std::string& g, const std::string& v) {
    auto gs = conc(g), vs = conc(v);
    if (gs == vs) return g;
    if (gs.size() < vs.size())
      throw std::logic_error("append_backward: cannot unbroadcast " + shape_str(gs) + " to " +
                             shape_str(vs));
    size_t lead = gs.size() - vs.size();
    std::vector<int64_t> dims;
    bool only_lead = true;
    for (size_t k = 0; k < gs.size(); ++k) {
      if (k < lead) {
        dims.push_back(static_cast<int64_t>(k));
      } else if (vs[k - lead] == 1 && gs[k] != 1) {
        dims.push_back(static_cast<int64_t>(k));
        only_lead = false;
      }
    }
    if (only_lead)  // dropping the leading dims leaves exactly v's shape
      return emit("reduce_sum", {g}, {{"dims", dims_of(dims)}}, pg(v));
    std::string r =
        emit("reduce_sum", {g}, {{"dims", dims_of(dims)}, {"keepdim", DimExpr(1)}}, pg(v));
    return lead ? reshape(r, v, pg(v)) : r;
  }

  std::string reshape(const std::string& x, const std::string& like, const std::string& base) {
    if (conc(x) == conc(like)) return x;
    return emit("reshape", {x}, {{"shape", type(like).shape}}, base);
  }

  std::string un(const char* kind, const std::string& x, const std::string& base) {
    return emit(kind, {x}, {}, base);
  }
  std::string bin(const char* kind, const std::string& a, const std::string& b,
                  const std::string& base) {
    return emit(kind, {a, b}, {}, base);
  }
  std::string scale(const std::string& x, double f, const std::string& base) {
    return emit("scale", {x}, {{"factor", f}}, base);
  }
  std::string add_scalar(const std::string& x, double v, const std::string& base) {
    return emit("add_scalar", {x}, {{"value", v}}, base);
  }
  std::string reduce(const char* kind, const std::string& x, std::vector<int64_t> dims, bool keep,
                     const std::string& base) {
    AttrMap a{{"dims", dims_of(dims)}};
    if (keep) a["keepdim"] = DimExpr(1);
    return emit(kind, {x}, std::move(a), base);
  }

  // Masks (m0, m1), each of shape `shape`: m0 = 1 where u >= v, m1 = 1 where
  // u < v (ties go to u). Built with topk_mask(k=1) over the pair stacked on a
  // new last dim, since the IR has no comparison op.
  std::pair<std::string, std::string> pair_mask(const std::string& u, const std::string& v,
                                                const std::string& like, const std::string& base) {
    const TensorType& t = type(like);
    Dims s1 = t.shape;
    s1.push_back(DimExpr(1));
    auto lift = [&](const std::string& x) {
      std::string y = x;
      if (conc(x) != conc(like)) y = emit("broadcast_to", {x}, {{"shape", t.shape}}, base);
      return emit("reshape", {y}, {{"shape", s1}}, base);
    };
    int64_t last = static_cast<int64_t>(t.rank());
    std::string st = emit("concat", {lift(u), lift(v)}, {{"dim", DimExpr(last)}}, base);
    std::string top = emit("topk_mask", {st}, {{"k", DimExpr(1)}}, base);
    auto pick = [&](int64_t i) {
      std::string s =
          emit("slice", {top},
               {{"dim", DimExpr(last)}, {"offset", DimExpr(i)}, {"size", DimExpr(1)}}, base);
      return emit("reshape", {s}, {{"shape", t.shape}}, base);
    };
    return {pick(0), pick(1)};
  }

  int64_t group_size(const Op& op) const {
    if (const Attr* a = op.attr("axes"); a && std::holds_alternative<Strings>(*a)) {
      int64_t n = 1;
      for (const auto& ax : std::get<Strings>(*a)) n *= mesh_->axes[*mesh_->axis_index(ax)].size;
      return n;
    }
    return static_cast<int64_t>(std::get<Groups>(*op.attr("groups")).at(0).size());
  }

  AttrMap group_attrs(const Op& op) const {
    AttrMap a;
    for (const char* k : {"axes", "groups"})
      if (const Attr* v = op.attr(k)) a[k] = *v;
    return a;
  }

  std::string reduce_kind(const Op& op) const {
    const Attr* a = op.attr("reduce");
    return a && std::holds_alternative<std::string>(*a) ? std::get<std::string>(*a) : "sum";
  }

  DimExpr backward_tag(const Op& op) const {
    const DimExpr& t = std::get<DimExpr>(*op.attr("tag"));
    return t + DimExpr(req_.tag_offset);
  }

  // --- the walk ------------------------------------------------------------

  void step(const Op& op) {
    if (op.kind == "send") {
      // The receiver sends the gradient back under tag + offset; receive it
      // even when nothing here needs it, or the peer's send would dangle.
      const std::string& x = op.operands[0];
      if (!is_float(type(x).dtype)) return;
      std::string r = emit("recv", {},
                           {{"peer", *op.attr("peer")},
                            {"tag", backward_tag(op)},
                            {"shape", type(x).shape},
                            {"dtype", std::string(dtype_name(type(x).dtype))}},
                           pg(x));
      if (active_.count(x)) accumulate(x, r);
      return;
    }
    if (op.kind == "recv") {
      // Always answered (with zeros when the loss does not depend on it): the
      // sender cannot know and waits for it.
      const std::string& y = op.results[0];
      if (!is_float(type(y).dtype)) return;
      finalized_.push_back(y);
      std::string g = grad_.count(y) ? grad_.at(y) : zeros(y, pg(y));
      emit("send", {g}, {{"peer", *op.attr("peer")}, {"tag", backward_tag(op)}}, "");
      return;
    }
    bool relevant = false;
    for (const auto& r : op.results) relevant |= grad_.count(r) && active_.count(r);
    if (!relevant) return;
    if (op.kind == "loop")
      no_adjoint("loops are not differentiated (differentiate the loop body instead)");
    if (op.results.size() != 1) no_adjoint();
    finalized_.push_back(op.results[0]);
    adjoint(op);
  }

  bool needs(const Op& op, size_t i) const {
    const std::string& x = op.operands[i];
    return differentiable(op)[i] && is_float(type(x).dtype) && active_.count(x);
  }

  void adjoint(const Op& op) {
    const std::string& k = op.kind;
    const std::string& y = op.results[0];
    const std::string dy = grad_.at(y);
    const auto& in = op.operands;
    auto give = [&](size_t i, const std::string& g) {
      if (needs(op, i)) accumulate(in[i], g);
    };
    auto need = [&](size_t i) { return needs(op, i); };
    auto P = [&](size_t i) { return pg(in[i]); };
    auto fattr = [&](const char* n, double dflt) { return sem::float_attr(op, n, b_, dflt); };
    auto iattr = [&](const char* n, int64_t dflt) { return sem::int_attr(op, n, b_, dflt); };

    // Elementwise, binary (operands broadcast).
    if (k == "add" || k == "sub") {
      if (need(0)) give(0, unbroadcast(dy, in[0]));
      if (need(1)) {
        std::string g = unbroadcast(dy, in[1]);
        give(1, k == "sub" ? un("neg", g, P(1)) : g);
      }
      return;
    }
    if (k == "mul") {
      if (need(0)) give(0, unbroadcast(bin("mul", dy, in[1], P(0)), in[0]));
      if (need(1)) give(1, unbroadcast(bin("mul", dy, in[0], P(1)), in[1]));
      return;
    }
    if (k == "div") {  // d/db (a/b) = -(a/b)/b
      if (need(0)) give(0, unbroadcast(bin("div", dy, in[1], P(0)), in[0]));
      if (need(1))
        give(1,
             un("neg", unbroadcast(bin("div", bin("mul", dy, y, P(1)), in[1], P(1)), in[1]), P(1)));
      return;
    }
    if (k == "maximum" || k == "minimum") {
      // max picks a where a >= b; min picks a where a <= b, i.e. -a >= -b.
      std::string u = in[0], v = in[1];
      if (k == "minimum") {
        u = un("neg", u, y + "_mask");
        v = un("neg", v, y + "_mask");
      }
      auto [ma, mb] = pair_mask(u, v, y, y + "_mask");
      if (need(0)) give(0, unbroadcast(bin("mul", dy, ma, P(0)), in[0]));
      if (need(1)) give(1, unbroadcast(bin("mul", dy, mb, P(1)), in[1]));
      return;
    }

    // Elementwise, unary.
    const std::string x = in[0];
    const std::string dx = pg(x);
    if (k == "identity" || k == "add_scalar" || k == "cast")
      return give(0, dy);  // cast back in accumulate
    if (k == "neg") return give(0, un("neg", dy, dx));
    if (k == "scale") return give(0, scale(dy, fattr("factor", 1), dx));
    if (k == "square") return give(0, scale(bin("mul", dy, x, dx), 2.0, dx));
    if (k == "pow") {
      double e = fattr("exponent", 1);
      if (e == 0) return;  // constant
      if (e == 1) return give(0, dy);
      if (e == 2) return give(0, scale(bin("mul", dy, x, dx), 2.0, dx));
      std::string p = emit("pow", {x}, {{"exponent", e - 1}}, dx);
      return give(0, scale(bin("mul", dy, p, dx), e, dx));
    }
    if (k == "exp") return give(0, bin("mul", dy, y, dx));
    if (k == "log") return give(0, bin("div", dy, x, dx));
    if (k == "sqrt") return give(0, bin("div", scale(dy, 0.5, dx), y, dx));
    if (k == "rsqrt")  // d x^-1/2 = -1/2 x^-3/2 = -1/2 y / x
      return give(0, scale(bin("mul", dy, bin("div", y, x, dx), dx), -0.5, dx));
    if (k == "tanh")
      return give(0, bin("mul", dy, add_scalar(un("neg", un("square", y, dx), dx), 1.0, dx), dx));
    if (k == "sigmoid")
      return give(0, bin("mul", dy, bin("mul", y, add_scalar(un("neg", y, dx), 1.0, dx), dx), dx));
    if (k == "reciprocal") return give(0, un("neg", bin("mul", dy, un("square", y, dx), dx), dx));
    if (k == "silu") return give(0, bin("silu_grad", x, dy, dx));
    if (k == "gelu") return give(0, bin("gelu_grad", x, dy, dx));
    if (k == "relu") {
      // relu(x) = max(x, 0), the tie at x = 0 going to 0 (zero gradient, as in PyTorch).
      std::string z = zeros(x, y + "_mask");
      return give(0, bin("mul", dy, pair_mask(z, x, x, y + "_mask").second, dx));
    }

    // Linear algebra and reductions.
    if (k == "matmul") {
      // Y = A' B' with A' = A^T if transpose_a, B' = B^T if transpose_b.
      bool ta = iattr("transpose_a", 0) != 0, tb = iattr("transpose_b", 0) != 0;
      const std::string &a = in[0], &b = in[1];
      auto mm = [&](const std::string& l, const std::string& r, bool tl, bool tr,
                    const std::string& base) {
        AttrMap at;
        if (tl) at["transpose_a"] = DimExpr(1);
        if (tr) at["transpose_b"] = DimExpr(1);
        return emit("matmul", {l, r}, std::move(at), base);
      };
      if (need(0)) {  // dA' = dY B'^T
        std::string g = ta ? mm(b, dy, tb, true, P(0)) : mm(dy, b, false, !tb, P(0));
        give(0, unbroadcast(g, a));
      }
      if (need(1)) {  // dB' = A'^T dY
        std::string g = tb ? mm(dy, a, true, ta, P(1)) : mm(a, dy, !ta, false, P(1));
        give(1, unbroadcast(g, b));
      }
      return;
    }
    if (k == "reduce_sum" || k == "reduce_mean" || k == "reduce_max") {
      size_t r = rank(x);
      std::vector<bool> red(r, false);
      for (int64_t d : sem::ints_attr(op, "dims", b_)) red[sem::norm_axis(d, r)] = true;
      bool keep = iattr("keepdim", 0) != 0;
      auto xs = conc(x);
      Dims kept_shape;  // x's shape with 1 at the reduced dims
      int64_t count = 1;
      for (size_t j = 0; j < r; ++j) {
        kept_shape.push_back(red[j] ? DimExpr(1) : type(x).shape[j]);
        if (red[j]) count *= xs[j];
      }
      std::string g = dy;
      if (!keep && rank(dy) != r) g = emit("reshape", {dy}, {{"shape", kept_shape}}, dx);
      if (k == "reduce_max") return give(0, bin("mul", g, argmax_mask(x, red, y + "_mask"), dx));
      if (conc(g) != xs) g = emit("broadcast_to", {g}, {{"shape", type(x).shape}}, dx);
      if (k == "reduce_mean") g = scale(g, 1.0 / static_cast<double>(count), dx);
      return give(0, g);
    }

    // Layout.
    if (k == "reshape") return give(0, reshape(dy, x, dx));
    if (k == "transpose") {
      auto perm = sem::ints_attr(op, "perm", b_);
      std::vector<int64_t> inv(perm.size());
      for (size_t j = 0; j < perm.size(); ++j)
        inv[sem::norm_axis(perm[j], perm.size())] = static_cast<int64_t>(j);
      return give(0, emit("transpose", {dy}, {{"perm", dims_of(inv)}}, dx));
    }
    if (k == "slice") {
      size_t d = sem::norm_axis(iattr("dim", 0), rank(x));
      const DimExpr& off = std::get<DimExpr>(*op.attr("offset"));
      const DimExpr& size = std::get<DimExpr>(*op.attr("size"));
      // In sizes, not evaluated: a literal here would equal a size as given
      // (128 rows of a head) and keep it through the reduction.
      DimExpr after = type(x).shape[d] - off - size;
      return give(
          0,
          emit("pad", {dy},
               {{"dim", DimExpr(static_cast<int64_t>(d))}, {"before", off}, {"after", after}}, dx));
    }
    if (k == "concat") {
      size_t d = sem::norm_axis(iattr("dim", 0), rank(x));
      DimExpr off(int64_t{0});
      for (size_t i = 0; i < in.size(); ++i) {
        const DimExpr& size = type(in[i]).shape[d];
        if (need(i))
          give(i, emit("slice", {dy},
                       {{"dim", DimExpr(static_cast<int64_t>(d))}, {"offset", off}, {"size", size}},
                       P(i)));
        off = off + size;
      }
      return;
    }
    if (k == "broadcast_to") return give(0, unbroadcast(dy, x));
    if (k == "pad") {
      size_t d = sem::norm_axis(iattr("dim", 0), rank(x));
      return give(0, emit("slice", {dy},
                          {{"dim", DimExpr(static_cast<int64_t>(d))},
                           {"offset", std::get<DimExpr>(*op.attr("before"))},
                           {"size", type(x).shape[d]}},
                          dx));
    }
    if (k == "where") {  // where(c, a, b) = c*a + (1-c)*b
      std::string z = emit(
          "fill", {},
          {{"value", 0.0}, {"shape", Dims{}}, {"dtype", std::string(dtype_name(type(dy).dtype))}},
          y + "_zero");
      if (need(1)) give(1, unbroadcast(emit("where", {in[0], dy, z}, {}, P(1)), in[1]));
      if (need(2)) give(2, unbroadcast(emit("where", {in[0], z, dy}, {}, P(2)), in[2]));
      return;
    }

    // Neural-network ops.
    if (k == "softmax")
      return give(0, emit("softmax_grad", {y, dy}, {{"dim", *op.attr("dim")}}, dx));
    if (k == "log_softmax") {  // dx = dy - softmax(x) * sum(dy)
      size_t d = sem::norm_axis(iattr("dim", -1), rank(x));
      std::string s = reduce("reduce_sum", dy, {static_cast<int64_t>(d)}, true, dx);
      return give(0, bin("sub", dy, bin("mul", un("exp", y, dx), s, dx), dx));
    }
    if (k == "rmsnorm" || k == "layernorm") return norm_adjoint(op, dy);
    if (k == "rope")
      return give(0, rope_adj(op, dy, "rope_grad"));  // a rotation: adjoint = inverse
    if (k == "rope_grad") return give(0, rope_adj(op, dy, "rope"));
    if (k == "swiglu") {  // silu(g) * u
      if (need(0)) give(0, bin("silu_grad", in[0], bin("mul", dy, in[1], P(0)), P(0)));
      if (need(1)) give(1, bin("mul", dy, un("silu", in[0], P(1)), P(1)));
      return;
    }
    if (k == "embedding") {  // table rows scatter-add; offset as in the forward (vocab shards)
      AttrMap a{{"vocab", type(x).shape[0]}};
      if (const Attr* o = op.attr("offset")) a["offset"] = *o;
      return give(0, emit("embedding_grad", {in[1], dy}, std::move(a), dx));
    }
    if (k == "embedding_grad") {  // linear in dy: its adjoint gathers rows
      AttrMap a;
      if (const Attr* o = op.attr("offset")) a["offset"] = *o;
      return give(1, emit("embedding", {dy, in[0]}, std::move(a), P(1)));
    }
    if (k == "cross_entropy") {
      AttrMap a;
      if (const Attr* r = op.attr("reduction")) a["reduction"] = *r;
      return give(0, emit("cross_entropy_grad", {x, in[1], in[2], dy}, std::move(a), dx));
    }
    if (k == "pick") {  // dlogits[n, v] = dy[n] * [labels[n] - offset == v]
      std::string oh =
          emit("one_hot", {in[1]}, {{"depth", type(x).shape[1]}, {"offset", *op.attr("offset")}},
               y + "_onehot");
      std::string d2 = emit("reshape", {dy}, {{"shape", Dims{type(dy).shape[0], DimExpr(1)}}}, dx);
      return give(0, bin("mul", d2, oh, dx));
    }

    // Communication (Megatron conventions, see autodiff.h).
    if (k == "allreduce") {
      std::string red = reduce_kind(op);
      if (red == "sum") return give(0, dy);
      if (red == "avg") return give(0, scale(dy, 1.0 / static_cast<double>(group_size(op)), dx));
      no_adjoint("allreduce with reduce=" + red);
    }
    if (k == "grad_allreduce") {
      AttrMap a{{"axes", *op.attr("grad_axes")}, {"reduce", std::string("sum")}};
      return give(0, emit("allreduce", {dy}, std::move(a), dx));
    }
    if (k == "allgather") {
      AttrMap a = group_attrs(op);
      a["dim"] = *op.attr("dim");
      a["reduce"] = std::string("sum");
      return give(0, emit("reduce_scatter", {dy}, std::move(a), dx));
    }
    if (k == "reduce_scatter") {
      std::string red = reduce_kind(op);
      if (red != "sum" && red != "avg") no_adjoint("reduce_scatter with reduce=" + red);
      AttrMap a = group_attrs(op);
      a["dim"] = *op.attr("dim");
      std::string g = emit("allgather", {dy}, std::move(a), dx);
      if (red == "avg") g = scale(g, 1.0 / static_cast<double>(group_size(op)), dx);
      return give(0, g);
    }
    if (k == "all_to_all") {  // a permutation: its adjoint is the inverse one
      AttrMap a = group_attrs(op);
      a["split_dim"] = *op.attr("concat_dim");
      a["concat_dim"] = *op.attr("split_dim");
      return give(0, emit("all_to_all", {dy}, std::move(a), dx));
    }
    no_adjoint();
  }

  std::string rope_adj(const Op& op, const std::string& dy, const char* kind) {
    return emit(kind, {dy, op.operands[1], op.operands[2]}, {}, pg(op.operands[0]));
  }

  // 1 at the (first) maximum of each group of reduced elements of x, else 0:
  // the reduced dims are moved last and merged so topk_mask(k=1) can find it.
  std::string argmax_mask(const std::string& x, const std::vector<bool>& red,
                          const std::string& base) {
    const TensorType& t = type(x);
    size_t r = t.rank();
    std::vector<int64_t> perm;
    Dims moved, merged;
    DimExpr n(int64_t{1});
    for (size_t j = 0; j < r; ++j)
      if (!red[j]) {
        perm.push_back(static_cast<int64_t>(j));
        moved.push_back(t.shape[j]);
        merged.push_back(t.shape[j]);
      }
    for (size_t j = 0; j < r; ++j)
      if (red[j]) {
        perm.push_back(static_cast<int64_t>(j));
        moved.push_back(t.shape[j]);
        n = n * t.shape[j];
      }
    merged.push_back(n);
    bool ident = true;
    for (size_t j = 0; j < r; ++j) ident &= perm[j] == static_cast<int64_t>(j);
    std::string v = ident ? x : emit("transpose", {x}, {{"perm", dims_of(perm)}}, base);
    v = emit("reshape", {v}, {{"shape", merged}}, base);
    v = emit("topk_mask", {v}, {{"k", DimExpr(1)}}, base);
    v = emit("reshape", {v}, {{"shape", moved}}, base);
    if (ident) return v;
    std::vector<int64_t> inv(r);
    for (size_t j = 0; j < r; ++j) inv[static_cast<size_t>(perm[j])] = static_cast<int64_t>(j);
    return emit("transpose", {v}, {{"perm", dims_of(inv)}}, base);
  }

  // rmsnorm / layernorm over the last dim, recomputing the normalized value:
  //   n = c * rstd (c = x, or x - mean(x)), y = n * w (+ b)
  //   dw = sum over rows of dy * n, db = sum of dy, dn = dy * w,
  //   dx = rstd * (dn - n * mean(dn * n))          (rmsnorm)
  //   dx = rstd * (dn - mean(dn) - n * mean(dn * n)) (layernorm)
  void norm_adjoint(const Op& op, const std::string& dy) {
    const auto& in = op.operands;
    const std::string& x = in[0];
    const std::string& y = op.results[0];
    bool ln = op.kind == "layernorm";
    int64_t last = static_cast<int64_t>(rank(x)) - 1;
    double eps = sem::float_attr(op, "eps", b_, 1e-5);
    std::string c = x;
    if (ln) c = bin("sub", x, reduce("reduce_mean", x, {last}, true, y + "_mean"), y + "_centered");
    std::string var = reduce("reduce_mean", un("square", c, y + "_var"), {last}, true, y + "_var");
    std::string rstd = un("rsqrt", add_scalar(var, eps, y + "_rstd"), y + "_rstd");
    std::string n = bin("mul", c, rstd, y + "_norm");
    auto need = [&](size_t i) { return needs(op, i); };
    if (need(1)) accumulate(in[1], unbroadcast(bin("mul", dy, n, pg(in[1])), in[1]));
    if (ln && need(2)) accumulate(in[2], unbroadcast(dy, in[2]));
    if (!need(0)) return;
    std::string dx = pg(x);
    std::string dn = bin("mul", dy, in[1], dx);
    std::string p = reduce("reduce_mean", bin("mul", dn, n, dx), {last}, true, dx);
    std::string t = bin("sub", dn, bin("mul", n, p, dx), dx);
    if (ln) t = bin("sub", t, reduce("reduce_mean", dn, {last}, true, dx), dx);
    accumulate(x, bin("mul", t, rstd, dx));
  }

  // Gives every emitted value its final name: the gradient of v is prefix + v
  // (wrt values first, so they get the unsuffixed names), other emitted values
  // take their base with a numeric suffix.
  void rename() {
    std::map<std::string, std::string> to;
    auto fresh = [&](const std::string& base) {
      std::string n = base;
      for (int i = 1; taken_.count(n); ++i) n = base + "_" + std::to_string(i);
      taken_.insert(n);
      return n;
    };
    auto name_final = [&](const std::string& v) {
      auto it = grad_.find(v);
      if (it == grad_.end() || !base_.count(it->second) || to.count(it->second)) return;
      to[it->second] = fresh(pg(v));
    };
    for (const auto& w : req_.wrt) name_final(w);
    for (const auto& v : finalized_) name_final(v);
    for (const auto& [v, g] : grad_) name_final(v);
    for (const auto& t : order_)
      if (!to.count(t)) to[t] = fresh(base_.at(t));
    auto map = [&](std::string& s) {
      if (auto it = to.find(s); it != to.end()) s = it->second;
    };
    for (auto& op : out_) {
      for (auto& o : op.operands) map(o);
      for (auto& r : op.results) map(r);
    }
    for (auto& [v, g] : grad_) map(g);
  }

  Graph& g_;
  const GradRequest& req_;
  const Bindings& b_;
  const Mesh* mesh_;
  TypeMap types_;                            // forward values and emitted temporaries
  std::set<std::string> taken_;              // names of the forward graph (and assigned ones)
  std::set<std::string> active_;             // values depending on a wrt (or received) value
  std::map<std::string, std::string> grad_;  // value -> its gradient so far
  std::map<std::string, std::string> base_;  // temporary -> base of its final name
  std::vector<std::string> order_;           // temporaries in emission order
  std::vector<std::string> finalized_;       // values in the order their gradient completed
  std::vector<Op> out_;
  const Op* cur_ = nullptr;  // forward op being differentiated, for messages
  int64_t tmp_ = 0;
};

}  // namespace

std::map<std::string, std::string> append_backward(Graph& g, const GradRequest& req,
                                                   const Bindings& b, const Mesh* mesh) {
  for (const auto& op : g.ops)
    for (const auto& r : op.regions)
      if (has_p2p(r))
        throw InvalidInput(
            Diag{"", "", op.label(), "",
                 "append_backward: a loop with point-to-point ops cannot be differentiated "
                 "(differentiate the loop body instead)"});
  return Backward(g, req, b, mesh).run();
}

}  // namespace parity::ir
