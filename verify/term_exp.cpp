// The exp-shift normal form: every sum whose terms all carry an exp factor
// has the part their exp arguments share taken out, sum_i c_i*exp(a_i + g) =
// exp(g) * sum_i c_i*exp(a_i), and log takes an exp factor out of its
// argument, log(exp(g)*R) = g + log(R), and exp(g + k log(x)) = exp(g) x^k
// for x > 0. All are identities over the reals (the second where either
// side is defined). Under them a softmax or a
// log-sum-exp no longer depends on the shift it was computed with: the row
// max of the spec, a vocab-parallel max reduced with `max` or with `sum`,
// the running max of an online softmax (flash or ring attention merging
// partial results by exp(m_i - m)). Only a comparison uses this form: built
// into every sum it was not confluent (a factored sum added to another exp
// term stayed factored), so equal partial sums stopped matching by id.
#include "verify/term.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

namespace parity::verify {

namespace {

bool is_exp(const Node& n) {
  return n.kind == TK::App && static_cast<ir::Fn>(n.aux) == ir::Fn::exp;
}

}  // namespace

// The argument of `t`'s exp factor (t an exp, or a product with one), if any.
std::optional<TermId> TermTable::exp_factor_arg(TermId t) const {
  const Mon m = mon(t);
  for (const auto& [f, e] : m.factors)
    if (is_exp(nodes_[f]) && e == 1) return nodes_[f].args[0];
  return std::nullopt;
}

TermId TermTable::take_out_shared_exp(TermId s) {
  const Lin l = lin(s);
  if (!l.c.is_zero() || l.terms.size() < 2) return s;
  std::optional<Lin> shared;
  for (const auto& [x, w] : l.terms) {
    const std::optional<TermId> arg = exp_factor_arg(x);
    if (!arg) return s;
    const Lin a = lin(*arg);
    if (!shared) {
      shared = a;
      continue;
    }
    // Both lists are sorted by id: keep the entries they have with the same weight.
    Lin keep;
    keep.c = shared->c == a.c ? a.c : Rational(0);
    size_t i = 0, j = 0;
    while (i < shared->terms.size() && j < a.terms.size()) {
      if (shared->terms[i].first < a.terms[j].first) {
        ++i;
      } else if (a.terms[j].first < shared->terms[i].first) {
        ++j;
      } else {
        if (shared->terms[i].second == a.terms[j].second) keep.terms.push_back(shared->terms[i]);
        ++i, ++j;
      }
    }
    shared = std::move(keep);
    if (shared->terms.empty() && shared->c.is_zero()) return s;
  }
  const TermId g = make_sum(shared->terms, shared->c);
  const TermId out = apply(ir::Fn::exp, scale(g, Rational(-1)));
  std::vector<TermId> parts;
  parts.reserve(l.terms.size());
  for (const auto& [x, w] : l.terms) parts.push_back(scale(mul(x, out), w));
  return mul(apply(ir::Fn::exp, g), sum(parts));
}

// sum_k c R [x = k] over every k in x's range is c R: an id takes exactly
// one value of its range where it has no value outside it (a label with no
// ignore_index). A cross-entropy that picks the target from logits shifted
// by their max carries -max sum_v [label = v] = -max, where the spec's pick
// from unshifted logits has no max at all (Megatron's vocab-parallel loss
// with label smoothing).
// Where `m` has a factor [x = k] over an id x with a small range and no
// values outside it, the factor's place.
std::optional<size_t> TermTable::complete_id_indicator(const Mon& m) const {
  for (size_t j = 0; j < m.factors.size(); ++j) {
    const Node& f = nodes_[m.factors[j].first];
    if (f.kind != TK::Ind || m.factors[j].second != 1) continue;
    const Node& x = nodes_[f.args[0]];
    if (x.kind != TK::IntVar) continue;
    const VarInfo& vi = vars_[static_cast<size_t>(x.aux)];
    if (vi.boolean || !vi.extra.empty() || vi.hi - vi.lo > 4096) continue;
    return j;
  }
  return std::nullopt;
}

TermId TermTable::complete_indicators(TermId s) {
  const Lin given = lin(s);
  if (given.terms.size() < 2) return s;
  // A term [x = k] R (a + b) is taken as [x = k] R a + [x = k] R b first: the
  // pick of a shifted logit is [label = v] (l_v - max).
  Lin l;
  l.c = given.c;
  for (const auto& [t, w] : given.terms) {
    const Mon m = mon(t);
    size_t at = m.factors.size();
    if (complete_id_indicator(m))
      for (size_t j = 0; j < m.factors.size() && at == m.factors.size(); ++j)
        if (nodes_[m.factors[j].first].kind == TK::Sum && m.factors[j].second == 1 &&
            nodes_[m.factors[j].first].args.size() <= 64)
          at = j;
    if (at == m.factors.size()) {
      l.terms.push_back({t, w});
      continue;
    }
    std::vector<std::pair<TermId, int64_t>> rest = m.factors;
    const Lin inner = lin(rest[at].first);
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(at));
    const TermId r = make_prod(m.coef, std::move(rest));
    for (const auto& [y, a] : inner.terms) l.terms.push_back({mul(r, y), w * a});
    if (!inner.c.is_zero()) l.terms.push_back({r, w * inner.c});
  }
  {
    // Terms met twice (the same product from two sums) are added up, so a
    // group below has one term for each k.
    std::map<TermId, Rational> merged;
    for (const auto& [t, w] : l.terms) merged[t] = merged.count(t) ? merged[t] + w : w;
    l.terms.clear();
    for (const auto& [t, w] : merged)
      if (!w.is_zero()) l.terms.push_back({t, w});
  }
  // (weight, the rest of the term, the id) -> the values of k met, and where.
  // One indicator a term: a term belongs to one group at most.
  std::map<std::tuple<TermId, TermId, TermId>, std::vector<std::pair<int64_t, size_t>>> groups;
  for (size_t i = 0; i < l.terms.size(); ++i) {
    const Mon m = mon(l.terms[i].first);
    const std::optional<size_t> j = complete_id_indicator(m);
    if (!j) continue;
    const Node& f = nodes_[m.factors[*j].first];
    std::vector<std::pair<TermId, int64_t>> rest = m.factors;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(*j));
    const TermId r = make_prod(m.coef, std::move(rest));
    groups[std::make_tuple(constant(l.terms[i].second), r, f.args[0])].push_back({f.nums[0].num(), i});
  }
  std::vector<bool> drop(l.terms.size(), false);
  std::vector<std::pair<TermId, Rational>> add;
  for (const auto& [key, ks] : groups) {
    const VarInfo& vi = vars_[static_cast<size_t>(nodes_[std::get<2>(key)].aux)];
    std::set<int64_t> seen;
    for (const auto& [k, i] : ks)
      if (k >= vi.lo && k < vi.hi) seen.insert(k);
    if (static_cast<int64_t>(seen.size()) != vi.hi - vi.lo) continue;
    // Every term of the group goes: one per k in the range, and [x = k] = 0
    // for a k outside it.
    for (const auto& [k, i] : ks) drop[i] = true;
    add.push_back({std::get<1>(key), nodes_[std::get<0>(key)].nums[0]});
  }
  if (add.empty()) return s;
  std::vector<std::pair<TermId, Rational>> terms;
  for (size_t i = 0; i < l.terms.size(); ++i)
    if (!drop[i]) terms.push_back(l.terms[i]);
  std::vector<TermId> parts;
  for (const auto& [t, w] : terms) parts.push_back(scale(t, w));
  for (const auto& [t, w] : add) parts.push_back(scale(t, w));
  parts.push_back(constant(l.c));
  return sum(parts);
}

// sum_i c_i F x_i = F sum_i c_i x_i for a factor F (with its exponent) that
// every term has: a renormalized softmax, p = softmax(s) m / rowsum(softmax(s)
// m), then has the softmax's 1/Z outside its row sum, where it cancels.
TermId TermTable::take_out_shared_factors(TermId s) {
  const Lin l = lin(s);
  if (!l.c.is_zero() || l.terms.size() < 2) return s;
  std::vector<std::pair<TermId, int64_t>> shared = mon(l.terms[0].first).factors;
  for (size_t k = 1; k < l.terms.size() && !shared.empty(); ++k) {
    const Mon m = mon(l.terms[k].first);
    std::vector<std::pair<TermId, int64_t>> keep;
    std::set_intersection(shared.begin(), shared.end(), m.factors.begin(), m.factors.end(), std::back_inserter(keep));
    shared = std::move(keep);
  }
  if (shared.empty()) return s;
  // Each term rebuilt without F, not divided by it: F may be a mask, and a
  // division cancelled would be recorded as one by a count that can be 0.
  std::vector<TermId> parts;
  parts.reserve(l.terms.size());
  for (const auto& [x, w] : l.terms) {
    Mon m = mon(x);
    std::vector<std::pair<TermId, int64_t>> rest;
    std::set_difference(m.factors.begin(), m.factors.end(), shared.begin(), shared.end(), std::back_inserter(rest));
    parts.push_back(scale(make_prod(m.coef, std::move(rest)), w));
  }
  return mul(make_prod(Rational(1), shared), sum(parts));
}

// exp(g + k log(x)) = exp(g) x^k for a whole k, where x > 0 by its form (a
// sum of exps: TransformerEngine's merge of ring-attention blocks weighs
// each by exp(lse_b - lse) with lse_b = m_b + log(l_b)). Where x can be 0
// or negative the left side is undefined and the right is not, so only a
// positive x is taken out.
TermId TermTable::take_out_logs(TermId e) {
  const Lin l = lin(nodes_[e].args[0]);
  std::vector<std::pair<TermId, Rational>> keep;
  std::vector<std::pair<TermId, int64_t>> out;
  for (const auto& [x, w] : l.terms) {
    const Node& n = nodes_[x];
    if (n.kind == TK::App && static_cast<ir::Fn>(n.aux) == ir::Fn::log && w.is_int() &&
        w.num() >= -4 && w.num() <= 4 && positive(n.args[0]))
      out.push_back({n.args[0], w.num()});
    else
      keep.push_back({x, w});
  }
  if (out.empty()) return e;
  TermId r = apply(ir::Fn::exp, make_sum(std::move(keep), l.c));
  for (const auto& [x, k] : out) r = mul(r, power(x, k));
  return r;
}

// log(c prod_k f_k^e_k) = log(c) + sum_k e_k log(f_k) where c > 0 and every
// f_k > 0 by its form (a log-probability written log(softmax(x)), the
// softmax a quotient of exps: a router z-loss as x_0 - log(softmax(x)_0)).
TermId TermTable::log_of_product(TermId x) {
  const Mon m = mon(x);
  bool split = Rational(0) < m.coef && !m.factors.empty() &&
               (m.factors.size() > 1 || m.factors[0].second != 1 || !m.coef.is_one());
  for (const auto& [f, e] : m.factors) split = split && positive(f);
  if (!split) return apply(ir::Fn::log, x);
  TermId s = m.coef.is_one() ? zero_ : apply(ir::Fn::log, constant(m.coef));
  for (const auto& [f, e] : m.factors) s = add(s, scale(apply(ir::Fn::log, f), Rational(e)));
  return s;
}

TermId TermTable::exp_normal(TermId t) {
  if (auto it = exp_normal_.find(t); it != exp_normal_.end()) return it->second;
  const Node n = nodes_[t];  // copy: interning may reallocate
  std::vector<TermId> args;
  args.reserve(n.args.size());
  bool changed = false;
  for (TermId a : n.args) {
    args.push_back(exp_normal(a));
    changed |= args.back() != a;
  }
  TermId r = t;
  switch (n.kind) {
    case TK::Const:
    case TK::Var:
    case TK::IntVar:
      break;
    case TK::Sum: {
      if (changed) {
        std::vector<TermId> parts;
        parts.reserve(args.size() + 1);
        for (size_t k = 0; k < args.size(); ++k) parts.push_back(scale(args[k], n.nums[k]));
        parts.push_back(constant(n.nums.back()));
        r = sum(parts);
      }
      r = complete_indicators(r);
      if (nodes_[r].kind == TK::Sum) r = take_out_shared_exp(r);
      if (nodes_[r].kind == TK::Sum) r = take_out_shared_factors(r);
      break;
    }
    case TK::Prod:
      if (changed) {
        r = one_;
        for (size_t k = 0; k < args.size(); ++k) r = mul(r, power(args[k], n.nums[k].num()));
      }
      break;
    case TK::App: {
      const auto f = static_cast<ir::Fn>(n.aux);
      r = changed ? apply(f, args[0]) : t;
      if (f == ir::Fn::exp) r = take_out_logs(r);
      if (f == ir::Fn::log && nodes_[r].kind == TK::App &&
          static_cast<ir::Fn>(nodes_[r].aux) == ir::Fn::log) {
        const TermId x = nodes_[r].args[0];
        if (const std::optional<TermId> g = exp_factor_arg(x))
          r = add(*g, log_of_product(mul(x, apply(ir::Fn::exp, scale(*g, Rational(-1))))));
        else
          r = log_of_product(x);
      }
      break;
    }
    case TK::Max:
    case TK::Min:
      if (changed) {
        r = args[0];
        for (size_t k = 1; k < args.size(); ++k) r = nary(n.kind, r, args[k]);
      }
      break;
    case TK::Ind:
      if (changed) r = ind(args[0], n.nums[0].num());
      break;
    case TK::PowC:
      if (changed) r = powc(args[0], n.nums[0]);
      break;
    case TK::TopK:
      if (changed) r = topk_mask(args, n.nums[0].num())[static_cast<size_t>(n.aux)];
      break;
  }
  exp_normal_[t] = r;
  return r;
}

}  // namespace parity::verify
