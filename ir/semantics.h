// The reference semantics of every local (non-communicating) op, written once
// over an abstract element domain D, so that numeric execution and symbolic
// verification cannot disagree about what an op means. docs/semantics.md lists
// the same definitions in prose.
//
// A domain provides, for its element type D::S:
//   S c(double)                      literal constant
//   S add(S,S), sub(S,S), mul(S,S), div(S,S), neg(S), sum(const std::vector<S>&)
//   S apply(Fn, S)                   exp, log, sqrt, rsqrt, tanh, sigmoid, gelu, gelu_grad, trunc
//   S max(S,S), min(S,S)
//   S ind(S id, int64_t k)           1 if the integer id equals k, else 0
//   S powc(S, double)                x^e for a non-integer constant e
//   std::vector<S> topk_mask(const std::vector<S>& row, int64_t k)
#pragma once
#include <cmath>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace parity::ir {

// trunc: rounding toward zero, what a cast to an integer type does to a float.
enum class Fn { exp, log, sqrt, rsqrt, tanh, sigmoid, gelu, gelu_grad, trunc };
const char* fn_name(Fn f);

// Raised when an op cannot be evaluated (e.g. a value of the wrong shape at run time).
struct EvalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace sem {

inline int64_t int_attr(const Op& op, const char* name, const Bindings& b, int64_t dflt) {
  const Attr* a = op.attr(name);
  if (!a) return dflt;
  if (auto* e = std::get_if<DimExpr>(a)) return e->eval(b);
  if (auto* f = std::get_if<double>(a)) return static_cast<int64_t>(*f);
  throw EvalError(std::string("attribute '") + name + "' is not an integer");
}
inline double float_attr(const Op& op, const char* name, const Bindings& b, double dflt) {
  const Attr* a = op.attr(name);
  if (!a) return dflt;
  if (auto* f = std::get_if<double>(a)) return *f;
  if (auto* e = std::get_if<DimExpr>(a)) return static_cast<double>(e->eval(b));
  throw EvalError(std::string("attribute '") + name + "' is not a number");
}
// A scalar attribute (ir::AttrSpec::scalar) as an element: a literal goes
// through the domain's `literal` where it has one (the term domain reads some
// literals as indeterminates); a dim expression is a size, always a constant.
// An integer-typed result (a filled id or count) keeps its literal.
inline bool integer_typed(const Op& op) {
  const Attr* t = op.attr("dtype");
  const auto* s = t ? std::get_if<std::string>(t) : nullptr;
  return s && (*s == "i64" || *s == "i1");
}
template <class D>
typename D::S scalar_attr(D& d, const Op& op, const char* name, const Bindings& b, double dflt) {
  const double v = float_attr(op, name, b, dflt);
  if constexpr (requires { d.literal(v); }) {
    const Attr* a = op.attr(name);
    const auto* e = a ? std::get_if<DimExpr>(a) : nullptr;
    if (a && (!e || e->is_const()) && !integer_typed(op)) return d.literal(v);
  }
  return d.c(v);
}
inline std::vector<int64_t> ints_attr(const Op& op, const char* name, const Bindings& b) {
  std::vector<int64_t> v;
  if (const Attr* a = op.attr(name))
    if (auto* d = std::get_if<Dims>(a))
      for (const auto& e : *d) v.push_back(e.eval(b));
  return v;
}
inline int64_t num_el(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}
inline size_t norm_axis(int64_t d, size_t rank) { return static_cast<size_t>(d < 0 ? d + static_cast<int64_t>(rank) : d); }

// Index of `out_idx` in an operand of shape `s` under numpy broadcasting.
inline int64_t bcast_flat(const std::vector<int64_t>& s, const std::vector<int64_t>& out_idx) {
  int64_t f = 0;
  size_t off = out_idx.size() - s.size();
  for (size_t k = 0; k < s.size(); ++k) f = f * s[k] + (s[k] == 1 ? 0 : out_idx[k + off]);
  return f;
}

inline std::vector<int64_t> bcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t x = k + a.size() >= n ? a[k + a.size() - n] : 1;
    int64_t y = k + b.size() >= n ? b[k + b.size() - n] : 1;
    if (x != y && x != 1 && y != 1) throw EvalError("shapes do not broadcast");
    out[k] = x == 1 ? y : x;
  }
  return out;
}

template <class S, class F>
Tensor<S> map1(const Tensor<S>& x, F f) {
  Tensor<S> out;
  out.shape = x.shape;
  out.data.reserve(x.data.size());
  for (const auto& v : x.data) out.data.push_back(f(v));
  return out;
}

template <class S, class F>
Tensor<S> map2(const Tensor<S>& a, const Tensor<S>& b, F f) {
  Tensor<S> out;
  out.shape = bcast_shape(a.shape, b.shape);
  int64_t n = 1;
  for (auto d : out.shape) n *= d;
  out.data.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto idx = out.index_of(i);
    out.data.push_back(f(a.data[bcast_flat(a.shape, idx)], b.data[bcast_flat(b.shape, idx)]));
  }
  return out;
}

// Reduces `x` over `dims` with `fold` (a function of the vector of reduced elements).
template <class S, class F>
Tensor<S> reduce(const Tensor<S>& x, const std::vector<int64_t>& dims_in, bool keep, F fold) {
  std::vector<bool> red(x.rank(), false);
  for (int64_t d : dims_in) red[norm_axis(d, x.rank())] = true;
  std::vector<int64_t> kept_shape, out_shape;
  for (size_t k = 0; k < x.rank(); ++k) {
    if (!red[k]) kept_shape.push_back(x.shape[k]);
    if (!red[k]) out_shape.push_back(x.shape[k]);
    else if (keep) out_shape.push_back(1);
  }
  int64_t nk = 1;
  for (auto d : kept_shape) nk *= d;
  std::vector<std::vector<S>> groups(static_cast<size_t>(nk));
  for (int64_t i = 0; i < x.size(); ++i) {
    auto idx = x.index_of(i);
    int64_t g = 0;
    for (size_t k = 0; k < x.rank(); ++k)
      if (!red[k]) g = g * x.shape[k] + idx[k];
    groups[static_cast<size_t>(g)].push_back(x.data[static_cast<size_t>(i)]);
  }
  Tensor<S> out;
  out.shape = out_shape;
  for (auto& g : groups) out.data.push_back(fold(g));
  return out;
}

// Calls f(row) for every 1-D slice along `dim`, writing the returned row back.
template <class S, class F>
Tensor<S> along(const Tensor<S>& x, size_t dim, F f) {
  Tensor<S> out = x;
  auto st = x.strides();
  int64_t n = x.shape[dim];
  for (int64_t i = 0; i < x.size(); ++i) {
    if ((i / st[dim]) % n != 0) continue;  // visit each row once, from its first element
    std::vector<S> row;
    for (int64_t j = 0; j < n; ++j) row.push_back(x.data[static_cast<size_t>(i + j * st[dim])]);
    auto r = f(row);
    for (int64_t j = 0; j < n; ++j) out.data[static_cast<size_t>(i + j * st[dim])] = r[static_cast<size_t>(j)];
  }
  return out;
}

template <class D>
std::vector<typename D::S> softmax_row(D& d, const std::vector<typename D::S>& row) {
  auto m = row[0];
  for (size_t j = 1; j < row.size(); ++j) m = d.max(m, row[j]);
  std::vector<typename D::S> e;
  for (const auto& v : row) e.push_back(d.apply(Fn::exp, d.sub(v, m)));
  auto z = d.sum(e);
  for (auto& v : e) v = d.div(v, z);
  return e;
}

template <class D>
typename D::S logsumexp_row(D& d, const std::vector<typename D::S>& row) {
  auto m = row[0];
  for (size_t j = 1; j < row.size(); ++j) m = d.max(m, row[j]);
  std::vector<typename D::S> e;
  for (const auto& v : row) e.push_back(d.apply(Fn::exp, d.sub(v, m)));
  return d.add(m, d.apply(Fn::log, d.sum(e)));
}

}  // namespace sem

// Evaluates one local op. `in` are the operand values; `b` binds dims, mesh
// sizes, the rank's coordinates and loop indices.
template <class D>
std::vector<Tensor<typename D::S>> eval_local(D& d, const Op& op, const std::vector<const Tensor<typename D::S>*>& in,
                                              const Bindings& b) {
  using S = typename D::S;
  using T = Tensor<S>;
  using namespace sem;
  const std::string& k = op.kind;
  auto one = [&](T t) { return std::vector<T>{std::move(t)}; };
  if (k == "fill") {
    std::vector<int64_t> shape = ints_attr(op, "shape", b);
    return one(T(shape, scalar_attr(d, op, "value", b, 0)));
  }
  if (in.empty()) throw EvalError("op '" + k + "' without operands");
  const T& x = *in[0];

  // Elementwise.
  if (k == "add") return one(map2(x, *in[1], [&](const S& a, const S& c) { return d.add(a, c); }));
  if (k == "sub") return one(map2(x, *in[1], [&](const S& a, const S& c) { return d.sub(a, c); }));
  if (k == "mul") return one(map2(x, *in[1], [&](const S& a, const S& c) { return d.mul(a, c); }));
  if (k == "div") return one(map2(x, *in[1], [&](const S& a, const S& c) { return d.div(a, c); }));
  if (k == "maximum") return one(map2(x, *in[1], [&](const S& a, const S& c) { return d.max(a, c); }));
  if (k == "minimum") return one(map2(x, *in[1], [&](const S& a, const S& c) { return d.min(a, c); }));
  if (k == "neg") return one(map1(x, [&](const S& a) { return d.neg(a); }));
  if (k == "identity" || k == "grad_allreduce") return one(x);
  if (k == "cast") {
    // A float's value survives a cast to another float type (the reals do not
    // round); a cast to an integer type truncates it, so a value sent through
    // i64 and back is not the value (integer-valued inputs keep theirs).
    const Attr* t = op.attr("dtype");
    if (t && std::holds_alternative<std::string>(*t) && std::get<std::string>(*t) == "i64")
      return one(map1(x, [&](const S& a) { return d.apply(Fn::trunc, a); }));
    return one(x);
  }
  if (k == "square") return one(map1(x, [&](const S& a) { return d.mul(a, a); }));
  if (k == "reciprocal") return one(map1(x, [&](const S& a) { return d.div(d.c(1), a); }));
  if (k == "relu") return one(map1(x, [&](const S& a) { return d.max(a, d.c(0)); }));
  struct U { const char* name; Fn f; };
  for (U u : {U{"exp", Fn::exp}, U{"log", Fn::log}, U{"sqrt", Fn::sqrt}, U{"rsqrt", Fn::rsqrt}, U{"tanh", Fn::tanh},
              U{"sigmoid", Fn::sigmoid}, U{"gelu", Fn::gelu}})
    if (k == u.name) return one(map1(x, [&](const S& a) { return d.apply(u.f, a); }));
  if (k == "silu") return one(map1(x, [&](const S& a) { return d.mul(a, d.apply(Fn::sigmoid, a)); }));
  if (k == "silu_grad")  // dy * (s + x s (1 - s)), s = sigmoid(x)
    return one(map2(x, *in[1], [&](const S& a, const S& dy) {
      S s = d.apply(Fn::sigmoid, a);
      return d.mul(dy, d.add(s, d.mul(d.mul(a, s), d.sub(d.c(1), s))));
    }));
  if (k == "gelu_grad")
    return one(map2(x, *in[1], [&](const S& a, const S& dy) { return d.mul(dy, d.apply(Fn::gelu_grad, a)); }));
  if (k == "scale") {
    S f = scalar_attr(d, op, "factor", b, 1);
    return one(map1(x, [&](const S& a) { return d.mul(f, a); }));
  }
  if (k == "add_scalar") {
    S v = scalar_attr(d, op, "value", b, 0);
    return one(map1(x, [&](const S& a) { return d.add(a, v); }));
  }
  if (k == "pow") {
    double e = float_attr(op, "exponent", b, 1);
    double ip;
    bool integral = std::modf(e, &ip) == 0.0 && std::fabs(e) <= 16;
    return one(map1(x, [&](const S& a) {
      if (!integral) return d.powc(a, e);
      S r = d.c(1);
      for (int i = 0; i < static_cast<int>(std::fabs(e)); ++i) r = d.mul(r, a);
      return e < 0 ? d.div(d.c(1), r) : r;
    }));
  }
  if (k == "where")  // cond is 0/1: cond*a + (1-cond)*b
    return one(map2(map2(x, *in[1], [&](const S& c, const S& a) { return d.mul(c, a); }),
                    map2(x, *in[2], [&](const S& c, const S& v) { return d.mul(d.sub(d.c(1), c), v); }),
                    [&](const S& p, const S& q) { return d.add(p, q); }));
  // Linear algebra and reductions.
  if (k == "matmul") {
    const T& y = *in[1];
    bool ta = int_attr(op, "transpose_a", b, 0) != 0, tb = int_attr(op, "transpose_b", b, 0) != 0;
    size_t ra = x.rank(), rb = y.rank();
    int64_t m = ta ? x.shape[ra - 1] : x.shape[ra - 2], kk = ta ? x.shape[ra - 2] : x.shape[ra - 1];
    int64_t n = tb ? y.shape[rb - 2] : y.shape[rb - 1];
    std::vector<int64_t> ba(x.shape.begin(), x.shape.end() - 2), bb(y.shape.begin(), y.shape.end() - 2);
    std::vector<int64_t> bs = bcast_shape(ba, bb);
    T out;
    out.shape = bs;
    out.shape.push_back(m);
    out.shape.push_back(n);
    int64_t nb = 1;
    for (auto v : bs) nb *= v;
    T bt;
    bt.shape = bs;
    std::vector<S> terms(static_cast<size_t>(kk));
    for (int64_t bi = 0; bi < nb; ++bi) {
      auto bidx = bs.empty() ? std::vector<int64_t>{} : bt.index_of(bi);
      int64_t oa = bcast_flat(ba, bidx) * x.shape[ra - 2] * x.shape[ra - 1];
      int64_t ob = bcast_flat(bb, bidx) * y.shape[rb - 2] * y.shape[rb - 1];
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t l = 0; l < kk; ++l) {
            const S& av = x.data[static_cast<size_t>(oa + (ta ? l * m + i : i * kk + l))];
            const S& bv = y.data[static_cast<size_t>(ob + (tb ? j * kk + l : l * n + j))];
            terms[static_cast<size_t>(l)] = d.mul(av, bv);
          }
          out.data.push_back(d.sum(terms));
        }
    }
    return one(out);
  }
  if (k == "reduce_sum" || k == "reduce_mean" || k == "reduce_max") {
    auto dims = ints_attr(op, "dims", b);
    bool keep = int_attr(op, "keepdim", b, 0) != 0;
    return one(reduce(x, dims, keep, [&](const std::vector<S>& g) {
      if (k == "reduce_max") {
        S m = g[0];
        for (size_t j = 1; j < g.size(); ++j) m = d.max(m, g[j]);
        return m;
      }
      S s = d.sum(g);
      return k == "reduce_sum" ? s : d.mul(d.c(1.0 / static_cast<double>(g.size())), s);
    }));
  }

  // Layout.
  if (k == "reshape") {
    T out = x;
    out.shape = ints_attr(op, "shape", b);
    return one(out);
  }
  if (k == "transpose") {
    auto perm = ints_attr(op, "perm", b);
    T out;
    for (auto p : perm) out.shape.push_back(x.shape[norm_axis(p, x.rank())]);
    out.data.resize(x.data.size(), x.data.empty() ? S{} : x.data[0]);
    for (int64_t i = 0; i < x.size(); ++i) {
      auto idx = x.index_of(i);
      std::vector<int64_t> o(perm.size());
      for (size_t j = 0; j < perm.size(); ++j) o[j] = idx[norm_axis(perm[j], x.rank())];
      out.data[static_cast<size_t>(out.flat(o))] = x.data[static_cast<size_t>(i)];
    }
    return one(out);
  }
  if (k == "slice") {
    size_t dim = norm_axis(int_attr(op, "dim", b, 0), x.rank());
    int64_t off = int_attr(op, "offset", b, 0), size = int_attr(op, "size", b, 1);
    if (off < 0 || off + size > x.shape[dim]) throw EvalError("slice out of bounds at run time");
    T out;
    out.shape = x.shape;
    out.shape[dim] = size;
    // Row-major: the slice is `outer` runs of size*inner consecutive elements.
    int64_t outer = 1, inner = 1;
    for (size_t k = 0; k < dim; ++k) outer *= x.shape[k];
    for (size_t k = dim + 1; k < x.rank(); ++k) inner *= x.shape[k];
    out.data.reserve(static_cast<size_t>(outer * size * inner));
    for (int64_t o = 0; o < outer; ++o) {
      const auto from = x.data.begin() + static_cast<std::ptrdiff_t>((o * x.shape[dim] + off) * inner);
      out.data.insert(out.data.end(), from, from + static_cast<std::ptrdiff_t>(size * inner));
    }
    return one(out);
  }
  if (k == "concat") {
    size_t dim = norm_axis(int_attr(op, "dim", b, 0), x.rank());
    T out;
    out.shape = x.shape;
    out.shape[dim] = 0;
    for (auto* t : in) out.shape[dim] += t->shape[dim];
    out.data.resize(static_cast<size_t>(num_el(out.shape)), x.data.empty() ? S{} : x.data[0]);
    int64_t base = 0;
    for (auto* t : in) {
      for (int64_t i = 0; i < t->size(); ++i) {
        auto idx = t->index_of(i);
        idx[dim] += base;
        out.data[static_cast<size_t>(out.flat(idx))] = t->data[static_cast<size_t>(i)];
      }
      base += t->shape[dim];
    }
    return one(out);
  }
  if (k == "broadcast_to") {
    T out;
    out.shape = ints_attr(op, "shape", b);
    for (int64_t i = 0; i < num_el(out.shape); ++i) out.data.push_back(x.data[static_cast<size_t>(bcast_flat(x.shape, out.index_of(i)))]);
    return one(out);
  }
  if (k == "pad") {
    size_t dim = norm_axis(int_attr(op, "dim", b, 0), x.rank());
    int64_t before = int_attr(op, "before", b, 0), after = int_attr(op, "after", b, 0);
    T out;
    out.shape = x.shape;
    out.shape[dim] += before + after;
    out.data.assign(static_cast<size_t>(num_el(out.shape)), d.c(0));
    for (int64_t i = 0; i < x.size(); ++i) {
      auto idx = x.index_of(i);
      idx[dim] += before;
      out.data[static_cast<size_t>(out.flat(idx))] = x.data[static_cast<size_t>(i)];
    }
    return one(out);
  }

  // Neural-network ops.
  if (k == "softmax" && int_attr(op, "causal", b, 0) != 0) {
    int64_t qo = int_attr(op, "q_offset", b, 0), ko = int_attr(op, "k_offset", b, 0);
    int64_t sq = x.shape[x.rank() - 2], sk = x.shape.back();
    T out = x;
    for (int64_t r = 0; r < x.size() / sk; ++r) {
      int64_t qpos = r % sq + qo;
      std::vector<S> vis;
      for (int64_t j = 0; j < sk && j + ko <= qpos; ++j) vis.push_back(x.data[static_cast<size_t>(r * sk + j)]);
      std::vector<S> p = vis.empty() ? vis : softmax_row(d, vis);
      for (int64_t j = 0; j < sk; ++j)
        out.data[static_cast<size_t>(r * sk + j)] = j < static_cast<int64_t>(p.size()) ? p[static_cast<size_t>(j)] : d.c(0);
    }
    return one(out);
  }
  if (k == "softmax" || k == "log_softmax") {
    size_t dim = norm_axis(int_attr(op, "dim", b, -1), x.rank());
    return one(along(x, dim, [&](const std::vector<S>& row) {
      if (k == "softmax") return softmax_row(d, row);
      S l = logsumexp_row(d, row);
      std::vector<S> r;
      for (const auto& v : row) r.push_back(d.sub(v, l));
      return r;
    }));
  }
  if (k == "softmax_grad") {  // y * (dy - sum(dy * y))
    size_t dim = norm_axis(int_attr(op, "dim", b, -1), x.rank());
    T out = x;
    auto st = x.strides();
    int64_t n = x.shape[dim];
    for (int64_t i = 0; i < x.size(); ++i) {
      if ((i / st[dim]) % n != 0) continue;
      std::vector<S> prods;
      for (int64_t j = 0; j < n; ++j) {
        size_t p = static_cast<size_t>(i + j * st[dim]);
        prods.push_back(d.mul(in[1]->data[p], x.data[p]));
      }
      S s = d.sum(prods);
      for (int64_t j = 0; j < n; ++j) {
        size_t p = static_cast<size_t>(i + j * st[dim]);
        out.data[p] = d.mul(x.data[p], d.sub(in[1]->data[p], s));
      }
    }
    return one(out);
  }
  if (k == "rmsnorm" || k == "layernorm") {
    double eps = float_attr(op, "eps", b, 1e-5);
    size_t dim = x.rank() - 1;
    int64_t h = x.shape[dim];
    S inv_h = d.c(1.0 / static_cast<double>(h));
    T out = along(x, dim, [&](const std::vector<S>& row) {
      std::vector<S> centered = row;
      if (k == "layernorm") {
        S mean = d.mul(inv_h, d.sum(row));
        for (auto& v : centered) v = d.sub(v, mean);
      }
      std::vector<S> sq;
      for (const auto& v : centered) sq.push_back(d.mul(v, v));
      S r = d.apply(Fn::rsqrt, d.add(d.mul(inv_h, d.sum(sq)), d.c(eps)));
      std::vector<S> o;
      for (const auto& v : centered) o.push_back(d.mul(v, r));
      return o;
    });
    out = map2(out, *in[1], [&](const S& a, const S& w) { return d.mul(a, w); });
    if (k == "layernorm") out = map2(out, *in[2], [&](const S& a, const S& bb) { return d.add(a, bb); });
    return one(out);
  }
  if (k == "rope" || k == "rope_grad") {
    const T& cs = *in[1];
    const T& sn = *in[2];
    bool inv = k == "rope_grad";
    T out = x;
    int64_t D2 = x.shape.back(), Sdim = x.shape[x.rank() - 2];
    for (int64_t i = 0; i < x.size(); i += 2) {
      int64_t pos = (i / D2) % Sdim, pair = (i % D2) / 2;
      const S& c = cs.data[static_cast<size_t>(pos * (D2 / 2) + pair)];
      const S& s = sn.data[static_cast<size_t>(pos * (D2 / 2) + pair)];
      const S& a = x.data[static_cast<size_t>(i)];
      const S& e = x.data[static_cast<size_t>(i + 1)];
      S ms = inv ? d.neg(s) : s;
      out.data[static_cast<size_t>(i)] = d.sub(d.mul(a, c), d.mul(e, ms));
      out.data[static_cast<size_t>(i + 1)] = d.add(d.mul(a, ms), d.mul(e, c));
    }
    return one(out);
  }
  if (k == "swiglu")
    return one(map2(x, *in[1], [&](const S& g, const S& u) { return d.mul(d.mul(g, d.apply(Fn::sigmoid, g)), u); }));
  if (k == "embedding") {  // x = table [V, H], in[1] = ids
    const T& ids = *in[1];
    int64_t off = int_attr(op, "offset", b, 0), V = x.shape[0], H = x.shape[1];
    T out;
    out.shape = ids.shape;
    out.shape.push_back(H);
    for (const auto& id : ids.data)
      for (int64_t h = 0; h < H; ++h) {
        std::vector<S> terms;
        for (int64_t v = 0; v < V; ++v) terms.push_back(d.mul(d.ind(id, v + off), x.data[static_cast<size_t>(v * H + h)]));
        out.data.push_back(d.sum(terms));
      }
    return one(out);
  }
  if (k == "embedding_grad") {  // x = ids, in[1] = dy [..., H]
    const T& dy = *in[1];
    int64_t off = int_attr(op, "offset", b, 0), V = int_attr(op, "vocab", b, 1), H = dy.shape.back();
    T out;
    out.shape = {V, H};
    for (int64_t v = 0; v < V; ++v)
      for (int64_t h = 0; h < H; ++h) {
        std::vector<S> terms;
        for (int64_t t = 0; t < x.size(); ++t)
          terms.push_back(d.mul(d.ind(x.data[static_cast<size_t>(t)], v + off), dy.data[static_cast<size_t>(t * H + h)]));
        out.data.push_back(d.sum(terms));
      }
    return one(out);
  }
  if (k == "pick" || k == "one_hot") {
    int64_t off = int_attr(op, "offset", b, 0);
    T out;
    if (k == "one_hot") {
      int64_t depth = int_attr(op, "depth", b, 1);
      out.shape = x.shape;
      out.shape.push_back(depth);
      for (const auto& id : x.data)
        for (int64_t j = 0; j < depth; ++j) out.data.push_back(d.ind(id, j + off));
      return one(out);
    }
    const T& lab = *in[1];
    int64_t N = x.shape[0], V = x.shape[1];
    out.shape = {N};
    for (int64_t n = 0; n < N; ++n) {
      std::vector<S> terms;
      for (int64_t v = 0; v < V; ++v)
        terms.push_back(d.mul(d.ind(lab.data[static_cast<size_t>(n)], v + off), x.data[static_cast<size_t>(n * V + v)]));
      out.data.push_back(d.sum(terms));
    }
    return one(out);
  }
  if (k == "cross_entropy" || k == "cross_entropy_grad") {
    const T& lab = *in[1];
    const T& mask = *in[2];
    const Attr* red = op.attr("reduction");
    bool mean = !(red && std::holds_alternative<std::string>(*red) && std::get<std::string>(*red) == "sum");
    int64_t N = x.shape[0], V = x.shape[1];
    S denom = mean ? d.sum(mask.data) : d.c(1);
    if (k == "cross_entropy") {
      std::vector<S> terms;
      for (int64_t n = 0; n < N; ++n) {
        std::vector<S> row(x.data.begin() + n * V, x.data.begin() + (n + 1) * V);
        std::vector<S> pick;
        for (int64_t v = 0; v < V; ++v) pick.push_back(d.mul(d.ind(lab.data[static_cast<size_t>(n)], v), row[static_cast<size_t>(v)]));
        terms.push_back(d.mul(mask.data[static_cast<size_t>(n)], d.sub(logsumexp_row(d, row), d.sum(pick))));
      }
      T out;
      out.data.push_back(d.div(d.sum(terms), denom));
      return one(out);
    }
    const S& dl = in[3]->data[0];
    T out = x;
    for (int64_t n = 0; n < N; ++n) {
      std::vector<S> row(x.data.begin() + n * V, x.data.begin() + (n + 1) * V);
      auto p = softmax_row(d, row);
      S f = d.div(d.mul(dl, mask.data[static_cast<size_t>(n)]), denom);
      for (int64_t v = 0; v < V; ++v)
        out.data[static_cast<size_t>(n * V + v)] = d.mul(f, d.sub(p[static_cast<size_t>(v)], d.ind(lab.data[static_cast<size_t>(n)], v)));
    }
    return one(out);
  }
  if (k == "topk_mask") {
    int64_t kk = int_attr(op, "k", b, 1);
    return one(along(x, x.rank() - 1, [&](const std::vector<S>& row) { return d.topk_mask(row, kk); }));
  }
  if (k == "adamw") {
    double lr = float_attr(op, "lr", b, 0), b1 = float_attr(op, "beta1", b, 0.9), b2 = float_attr(op, "beta2", b, 0.999);
    double eps = float_attr(op, "eps", b, 1e-8), wd = float_attr(op, "weight_decay", b, 0);
    int64_t step = int_attr(op, "step", b, 1);
    double c1 = 1 - std::pow(b1, static_cast<double>(step)), c2 = 1 - std::pow(b2, static_cast<double>(step));
    T p = x, m = *in[2], v = *in[3];
    const T& g = *in[1];
    // 1 - beta and the step-1 bias corrections are formed in the domain:
    // exact for terms (1 - 0.9009 in double reads back as a rational with a
    // 20-digit denominator, and products of those overflow).
    const S one = d.c(1), B1 = d.c(b1), B2 = d.c(b2);
    const S omb1 = d.sub(one, B1), omb2 = d.sub(one, B2);
    const S ic1 = step == 1 ? d.div(one, omb1) : d.c(1 / c1);
    const S ic2 = step == 1 ? d.div(one, omb2) : d.c(1 / c2);
    for (size_t i = 0; i < p.data.size(); ++i) {
      m.data[i] = d.add(d.mul(B1, in[2]->data[i]), d.mul(omb1, g.data[i]));
      v.data[i] = d.add(d.mul(B2, in[3]->data[i]), d.mul(omb2, d.mul(g.data[i], g.data[i])));
      S mhat = d.mul(ic1, m.data[i]);
      S vhat = d.mul(ic2, v.data[i]);
      S upd = d.add(d.div(mhat, d.add(d.apply(Fn::sqrt, vhat), d.c(eps))), d.mul(d.c(wd), x.data[i]));
      p.data[i] = d.sub(x.data[i], d.mul(d.c(lr), upd));
    }
    return {p, m, v};
  }
  if (k == "sgd_momentum") {
    double lr = float_attr(op, "lr", b, 0), mom = float_attr(op, "momentum", b, 0), wd = float_attr(op, "weight_decay", b, 0);
    T p = x, buf = *in[2];
    for (size_t i = 0; i < p.data.size(); ++i) {
      S g = d.add(in[1]->data[i], d.mul(d.c(wd), x.data[i]));
      buf.data[i] = d.add(d.mul(d.c(mom), in[2]->data[i]), g);
      p.data[i] = d.sub(x.data[i], d.mul(d.c(lr), buf.data[i]));
    }
    return {p, buf};
  }
  throw EvalError("no semantics for op '" + k + "'");
}

}  // namespace parity::ir
