#include "verify/term.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace parity::verify {

TermTable::TermTable() {
  zero_ = constant(Rational(0));
  one_ = constant(Rational(1));
}

namespace {

uint64_t mix(uint64_t h, uint64_t x) {
  // splitmix64's finalizer over the running hash and the next word
  h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

uint64_t node_hash(const Node& n) {
  uint64_t h = mix(static_cast<uint64_t>(n.kind), static_cast<uint64_t>(static_cast<uint32_t>(n.aux)));
  for (TermId a : n.args) h = mix(h, a);
  h = mix(h, n.args.size());
  for (const auto& r : n.nums) h = mix(mix(h, r.key_hi()), r.key_lo());
  return h;
}

bool same_node(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.aux != b.aux || a.args != b.args || a.nums.size() != b.nums.size()) return false;
  for (size_t i = 0; i < a.nums.size(); ++i)
    if (!(a.nums[i] == b.nums[i])) return false;
  return true;
}

constexpr TermId kNoTerm = ~TermId{0};

}  // namespace

void TermTable::grow_index() {
  std::vector<Slot> old = std::move(index_);
  index_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
  const size_t mask = index_.size() - 1;
  for (const Slot& s : old) {
    if (s.id == kNoTerm) continue;
    size_t i = s.hash & mask;
    while (index_[i].id != kNoTerm) i = (i + 1) & mask;
    index_[i] = s;
  }
}

TermId TermTable::intern(Node n) {
  if (2 * (nodes_.size() + 1) > index_.size()) grow_index();
  const uint64_t h = node_hash(n);
  const size_t mask = index_.size() - 1;
  size_t i = h & mask;
  for (; index_[i].id != kNoTerm; i = (i + 1) & mask)
    if (index_[i].hash == h && same_node(nodes_[index_[i].id], n)) return index_[i].id;
  TermId id = static_cast<TermId>(nodes_.size());
  // What a node costs, about: its slot in the node vector (and the copy a
  // reallocation makes), its index entries, and the heap blocks of its lists.
  bytes_ += 2 * sizeof(Node) + 4 * sizeof(uint64_t) + 2 * n.args.size() * sizeof(TermId) +
            2 * n.nums.size() * sizeof(Rational) + 32;
  if (bytes_ > max_bytes_)
    throw TermLimit("the symbolic terms grew past " + std::to_string(max_bytes_ >> 20) + " MB");
  nodes_.push_back(std::move(n));
  index_[i] = Slot{h, id};
  return id;
}

TermId TermTable::constant(const Rational& r) { return intern(Node{TK::Const, 0, {}, {r}}); }

TermId TermTable::var(const std::string& name) {
  vars_.push_back(VarInfo{name, false, false, 0, 0, {}});
  return intern(Node{TK::Var, static_cast<int32_t>(vars_.size() - 1), {}, {}});
}
TermId TermTable::int_var(const std::string& name, int64_t lo, int64_t hi, std::vector<int64_t> extra) {
  vars_.push_back(VarInfo{name, true, false, lo, hi, std::move(extra)});
  return intern(Node{TK::IntVar, static_cast<int32_t>(vars_.size() - 1), {}, {}});
}
TermId TermTable::bool_var(const std::string& name) {
  vars_.push_back(VarInfo{name, true, true, 0, 2, {}});
  return intern(Node{TK::IntVar, static_cast<int32_t>(vars_.size() - 1), {}, {}});
}

bool TermTable::is_const(TermId t, Rational* v) const {
  if (nodes_[t].kind != TK::Const) return false;
  if (v) *v = nodes_[t].nums[0];
  return true;
}

TermTable::Lin TermTable::lin(TermId t) const {
  const Node& n = nodes_[t];
  Lin l;
  if (n.kind == TK::Const) {
    l.c = n.nums[0];
  } else if (n.kind == TK::Sum) {
    for (size_t k = 0; k < n.args.size(); ++k) l.terms.push_back({n.args[k], n.nums[k]});
    l.c = n.nums.back();
  } else {
    l.terms.push_back({t, Rational(1)});
  }
  return l;
}

TermId TermTable::make_sum(std::vector<std::pair<TermId, Rational>> terms, const Rational& c) {
  // Callers mostly pass sorted runs already merged (see sum): check first.
  auto by_id = [](const auto& x, const auto& y) { return x.first < y.first; };
  if (!std::is_sorted(terms.begin(), terms.end(), by_id)) std::sort(terms.begin(), terms.end(), by_id);
  Node n{TK::Sum, 0, {}, {}};
  n.args.reserve(terms.size());
  n.nums.reserve(terms.size() + 1);
  for (size_t i = 0; i < terms.size();) {
    TermId t = terms[i].first;
    Rational r = terms[i].second;
    for (++i; i < terms.size() && terms[i].first == t; ++i) r = r + terms[i].second;
    if (!r.is_zero()) {
      n.args.push_back(t);
      n.nums.push_back(r);
    }
  }
  if (n.args.empty()) return constant(c);
  Rational c0 = c;
  if (n.args.size() > 1) complete_topk_rows(n, c0);
  if (n.args.empty()) return constant(c0);
  if (n.args.size() == 1 && n.nums[0].is_one() && c0.is_zero()) return n.args[0];
  n.nums.push_back(c0);
  return intern(std::move(n));
}

// Every entry of one top-k mask row with one weight w sums to w min(k, n):
// the mask selects exactly k of the row's n entries, ties broken by position
// (a mean load of T*K/E written as a constant where the spec averages the
// routed counts).
void TermTable::complete_topk_rows(Node& n, Rational& c) {
  std::map<std::pair<TermId, Rational>, std::vector<size_t>> rows;  // (entry 0's id, weight) -> places
  for (size_t i = 0; i < n.args.size(); ++i) {
    if (nodes_[n.args[i]].kind != TK::TopK) continue;
    // Entry 0 of the row names it: entries share their operands and k.
    const Node x = nodes_[n.args[i]];  // a copy: interning may move nodes_
    const TermId first = intern(Node{TK::TopK, 0, x.args, x.nums});
    rows[{first, n.nums[i]}].push_back(i);
  }
  std::vector<bool> drop(n.args.size(), false);
  bool any = false;
  for (const auto& [key, at] : rows) {
    const Node& x = nodes_[key.first];
    if (at.size() != x.args.size()) continue;
    const int64_t k = std::min<int64_t>(x.nums[0].num(), static_cast<int64_t>(x.args.size()));
    c = c + key.second * Rational(k);
    for (size_t i : at) drop[i] = true;
    any = true;
  }
  if (!any) return;
  size_t w = 0;
  for (size_t i = 0; i < n.args.size(); ++i)
    if (!drop[i]) {
      n.args[w] = n.args[i];
      n.nums[w] = n.nums[i];
      ++w;
    }
  n.args.resize(w);
  n.nums.resize(w);
}

TermId TermTable::add(TermId a, TermId b) { return sum({a, b}); }

TermId TermTable::sum(const std::vector<TermId>& ts) {
  // Each operand's terms are sorted by id: merge the runs instead of sorting
  // (a running sum of n terms would otherwise cost n log n per addition).
  std::vector<std::pair<TermId, Rational>> terms;
  std::vector<size_t> runs{0};
  Rational c;
  for (TermId t : ts) {
    const Node& n = nodes_[t];
    if (n.kind == TK::Const) {
      c = c + n.nums[0];
      continue;
    }
    if (n.kind == TK::Sum) {
      for (size_t k = 0; k < n.args.size(); ++k) terms.push_back({n.args[k], n.nums[k]});
      c = c + n.nums.back();
    } else {
      terms.push_back({t, Rational(1)});
    }
    runs.push_back(terms.size());
  }
  auto by_id = [](const auto& x, const auto& y) { return x.first < y.first; };
  while (runs.size() > 2) {
    std::vector<size_t> next{0};
    for (size_t i = 0; i + 1 < runs.size(); i += 2) {
      size_t end = i + 2 < runs.size() ? runs[i + 2] : runs[i + 1];
      if (i + 2 < runs.size())
        std::inplace_merge(terms.begin() + static_cast<std::ptrdiff_t>(runs[i]),
                           terms.begin() + static_cast<std::ptrdiff_t>(runs[i + 1]),
                           terms.begin() + static_cast<std::ptrdiff_t>(end), by_id);
      next.push_back(end);
    }
    runs = std::move(next);
  }
  return make_sum(std::move(terms), c);
}

TermId TermTable::scale(TermId a, const Rational& c) {
  if (c.is_zero()) return zero_;
  if (c.is_one()) return a;
  Lin l = lin(a);
  for (auto& [t, r] : l.terms) r = r * c;
  return make_sum(std::move(l.terms), l.c * c);
}

TermTable::Mon TermTable::mon(TermId t) const {
  const Node& n = nodes_[t];
  Mon m{Rational(1), {}};
  if (n.kind == TK::Const) {
    m.coef = n.nums[0];
  } else if (n.kind == TK::Sum && n.args.size() == 1 && n.nums[1].is_zero()) {
    Mon inner = mon(n.args[0]);
    m.coef = n.nums[0] * inner.coef;
    m.factors = std::move(inner.factors);
  } else if (n.kind == TK::Prod) {
    for (size_t k = 0; k < n.args.size(); ++k) m.factors.push_back({n.args[k], n.nums[k].num()});
  } else {
    m.factors.push_back({t, 1});
  }
  return m;
}

TermId TermTable::make_prod(Rational coef, std::vector<std::pair<TermId, int64_t>> factors) {
  if (coef.is_zero()) return zero_;
  // A sum factor carries no scale of its own: the size of its first term's
  // coefficient (by id) moves to the product's, so that x*(s*a + s*b) and
  // s*x*(a + b) are one term (a loss scale applied before a sum and removed
  // after it). The sign stays: flipping it rewrote the loss of a
  // vocab-parallel cross-entropy into quotients that z3 no longer proved
  // (a division by a sum of masks that can be 0 is a free value in z3).
  for (auto& [t, e] : factors) {
    const Node& n = nodes_[t];
    if (n.kind != TK::Sum || (n.args.size() == 1 && n.nums.back().is_zero())) continue;
    const Rational lead = n.nums[0] < Rational(0) ? -n.nums[0] : n.nums[0];
    if (lead.is_one()) continue;
    // Cached: a long sum (a count over 8192 tokens) is a factor of many
    // products, and scaling it again each time costs its length.
    TermId unit;
    if (auto it = units_.find(t); it != units_.end()) {
      unit = it->second;
    } else {
      unit = scale(t, lead.inverse());
      units_.emplace(t, unit);
    }
    for (int64_t j = 0; j < (e < 0 ? -e : e); ++j) coef = e < 0 ? coef * lead.inverse() : coef * lead;
    t = unit;
  }
  std::sort(factors.begin(), factors.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<TermId, int64_t>> merged;
  std::vector<TermId> exp_args;  // exp(a)^e factors merge into exp(sum)
  bool divided = false;  // the run of `t` being merged has a negative part
  for (size_t k = 0; k < factors.size(); ++k) {
    const auto [t, e] = factors[k];
    if (!merged.empty() && merged.back().first == t) {
      merged.back().second += e;
      divided |= e < 0;
    } else {
      merged.push_back({t, e});
      divided = e < 0;
    }
    // y^-1 taken back by y: the quotient was undefined where y is 0.
    if (divided && merged.back().second >= 0 && (k + 1 == factors.size() || factors[k + 1].first != t) &&
        zero_cancelled_.size() < 64 && can_be_zero(t) &&
        std::find(zero_cancelled_.begin(), zero_cancelled_.end(), t) == zero_cancelled_.end())
      zero_cancelled_.push_back(t);
  }
  std::vector<std::pair<TermId, int64_t>> kept, swapped;
  for (auto& [t, e] : merged) {
    if (e == 0) continue;
    const Node& n = nodes_[t];
    // b^k = b for a 0/1 value and k >= 1: a dropout mask applied twice in a
    // recomputed backward, (g*m)*m.
    if (e > 1 && (n.kind == TK::TopK || is_bit(t, 0))) e = 1;
    if (n.kind == TK::App && static_cast<ir::Fn>(n.aux) == ir::Fn::exp) {
      exp_args.push_back(scale(n.args[0], Rational(e)));
      continue;
    }
    // max(a, b)^-k = min(1/a, 1/b)^k where every argument is positive: a
    // clip coefficient 1/max(1, (norm + eps)/c) (DeepSpeed's clamp(min=1))
    // is PyTorch's min(1, c/(norm + eps)).
    if ((n.kind == TK::Max || n.kind == TK::Min) && e < 0 &&
        std::all_of(n.args.begin(), n.args.end(), [&](TermId a) { return positive(a); })) {
      const std::vector<TermId> args = n.args;  // copy: interning may reallocate
      const TK other = n.kind == TK::Max ? TK::Min : TK::Max;
      TermId r = recip(args[0]);
      for (size_t k = 1; k < args.size(); ++k) r = nary(other, r, recip(args[k]));
      swapped.push_back({r, -e});
      continue;
    }
    if (n.kind == TK::Const) {  // cannot normally happen; fold defensively
      Rational v = n.nums[0];
      for (int64_t j = 0; j < (e < 0 ? -e : e); ++j) coef = e < 0 ? coef * v.inverse() : coef * v;
      continue;
    }
    kept.push_back({t, e});
  }
  fold_square_roots(coef, kept);
  if (!exp_args.empty()) {
    TermId s = sum(exp_args);
    if (!(nodes_[s].kind == TK::Const && nodes_[s].nums[0].is_zero())) {
      kept.push_back({apply(ir::Fn::exp, s), 1});
      std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
  }
  TermId core;
  if (kept.empty()) {
    core = one_;
  } else if (kept.size() == 1 && kept[0].second == 1) {
    core = kept[0].first;
  } else {
    Node n{TK::Prod, 0, {}, {}};
    for (auto& [t, e] : kept) {
      n.args.push_back(t);
      n.nums.push_back(Rational(e));
    }
    core = intern(std::move(n));
  }
  TermId out = scale(core, coef);
  for (const auto& [r, k] : swapped) out = mul(out, power(r, k));  // positive powers: no swap again
  return out;
}

// The range of a mask, an indicator [id = k], or a sum of them and a
// constant, over 0/1 values of its terms; false for anything else (or, with
// `whole`, for a weight that is not a whole number).
bool TermTable::bit_sum_range(TermId t, bool whole, Rational& lo, Rational& hi) const {
  auto bit = [&](TermId x) { return is_bit(x, 0); };
  if (bit(t)) {
    lo = Rational(0), hi = Rational(1);
    return true;
  }
  if (nodes_[t].kind != TK::Sum) return false;
  Lin l = lin(t);
  if (whole && !l.c.is_int()) return false;
  lo = hi = l.c;
  for (const auto& [x, c] : l.terms) {
    if (!bit(x) || (whole && !c.is_int())) return false;
    if (c < Rational(0)) lo = lo + c;
    else hi = hi + c;
  }
  return true;
}

// Whether `t` is 0 or 1 for every value of its variables: a mask, an
// indicator [id = k], its complement 1 - b, or a product of such (a padding
// mask times "not an end-of-document token", Megatron's eod_mask_loss).
bool TermTable::is_bit(TermId t, int depth) const {
  const Node& m = nodes_[t];
  if ((m.kind == TK::IntVar && vars_[static_cast<size_t>(m.aux)].boolean) || m.kind == TK::Ind) return true;
  if (depth > 4) return false;
  if (m.kind == TK::Prod) {
    for (size_t k = 0; k < m.args.size(); ++k)
      if (m.nums[k] < Rational(1) || !is_bit(m.args[k], depth + 1)) return false;
    return true;
  }
  return m.kind == TK::Sum && m.args.size() == 1 && m.nums[0] == Rational(-1) && m.nums[1].is_one() &&
         is_bit(m.args[0], depth + 1);
}

// A count of tokens whose range reaches 0 (sum(mask), or N - sum[label =
// -100] for the tokens not ignored). Any such sum counts: a count that
// cannot reach 0 only costs a numeric run.
bool TermTable::can_be_zero(TermId t) const {
  Rational lo, hi;
  return (bit_sum_range(t, false, lo, hi) && !(Rational(0) < lo) && !(hi < Rational(0))) || masked_positive(t);
}

// A sum with positive weights and no constant of products of positive terms
// and masks: a masked row sum of a softmax, sum_j exp(s_ij - m_i) [doc_i =
// doc_j], which is 0 for a query whose document has no key in the block
// (a ring-attention block over packed documents normalized on its own).
// Whether the masks can all be 0 together is not decided here: a count
// wrongly taken as one that can be 0 only costs a numeric run.
bool TermTable::masked_positive(TermId t, int depth) const {
  if (is_bit(t, 0)) return true;
  const Node& n = nodes_[t];
  if (depth > 6) return false;
  if (n.kind == TK::Prod) {
    bool masked = false;
    for (size_t k = 0; k < n.args.size(); ++k) {
      if (!(n.nums[k] < Rational(1)) && masked_positive(n.args[k], depth + 1)) masked = true;
      else if (!positive(n.args[k], depth + 1)) return false;
    }
    return masked;
  }
  if (n.kind != TK::Sum) return false;
  Lin l = lin(t);
  if (!l.c.is_zero() || l.terms.empty()) return false;
  for (const auto& [x, c] : l.terms)
    if (!(Rational(0) < c) || !masked_positive(x, depth + 1)) return false;
  return true;
}

// A whole number >= 0: whole weights on 0/1 terms, least value >= 0.
bool TermTable::is_count(TermId t) const {
  Rational lo, hi;
  return bit_sum_range(t, true, lo, hi) && !(lo < Rational(0));
}

TermId TermTable::mul(TermId a, TermId b) {
  Mon x = mon(a), y = mon(b);
  x.factors.insert(x.factors.end(), y.factors.begin(), y.factors.end());
  return make_prod(x.coef * y.coef, std::move(x.factors));
}

TermId TermTable::power(TermId a, int64_t e) {
  Mon x = mon(a);
  Rational c(1);
  for (int64_t j = 0; j < (e < 0 ? -e : e); ++j) c = c * x.coef;
  if (e < 0) c = c.inverse();
  for (auto& f : x.factors) f.second *= e;
  return make_prod(c, std::move(x.factors));
}

TermId TermTable::recip(TermId a) { return power(a, -1); }

// Whether `t` is >= 0 wherever it is defined, by its form: a nonnegative
// constant, a mask, an exp or a sqrt, an even power, a product of such, or
// a sum of such with positive weights (a sum of squared gradients).
bool TermTable::nonneg(TermId t, int depth) const {
  const Node& n = nodes_[t];
  if (depth > 8) return false;
  switch (n.kind) {
    case TK::Const: return !(n.nums[0] < Rational(0));
    case TK::IntVar: return vars_[static_cast<size_t>(n.aux)].boolean;
    case TK::App: {
      const auto f = static_cast<ir::Fn>(n.aux);
      return f == ir::Fn::exp || f == ir::Fn::sqrt || f == ir::Fn::sigmoid;
    }
    case TK::Prod:
      for (size_t k = 0; k < n.args.size(); ++k) {
        const Rational& e = n.nums[k];
        const bool even = e.is_int() && e.is_small() && e.num() % 2 == 0;
        if (!even && !nonneg(n.args[k], depth + 1)) return false;
      }
      return true;
    case TK::Sum: {
      Lin l = lin(t);
      if (l.c < Rational(0)) return false;
      for (const auto& [x, c] : l.terms)
        if (c < Rational(0) || !nonneg(x, depth + 1)) return false;
      return true;
    }
    default: return false;
  }
}

bool TermTable::positive(TermId t, int depth) const {
  const Node& n = nodes_[t];
  if (depth > 8) return false;
  switch (n.kind) {
    case TK::Const: return Rational(0) < n.nums[0];
    case TK::App: {
      const auto f = static_cast<ir::Fn>(n.aux);
      return f == ir::Fn::exp || f == ir::Fn::sigmoid;
    }
    case TK::Prod:
      for (TermId a : n.args)
        if (!positive(a, depth + 1)) return false;
      return true;
    case TK::Sum: {  // positive terms with positive weights, and a constant >= 0
      Lin l = lin(t);
      if (l.c < Rational(0) || l.terms.empty()) return false;
      // With a positive constant, terms >= 0 do (a norm + eps).
      const bool c_pos = Rational(0) < l.c;
      for (const auto& [x, c] : l.terms)
        if (!(Rational(0) < c) || !(c_pos ? nonneg(x, depth + 1) : positive(x, depth + 1))) return false;
      return true;
    }
    default: return false;
  }
}

// sqrt(y)^b * y^a = sqrt(y)^(2a+b) = y^q * sqrt(y)^r with r in {0, 1}: a
// norm written pow(s, 0.5), s * rsqrt(s) or sqrt(s)^2 (PyTorch's
// clip_grad_norm_: per-parameter norms squared, summed, to the power 0.5)
// is the same term as sqrt(s) or s. The sqrt goes (r = 0 with b != 0) only
// where y >= 0 is known from its form: elsewhere sqrt(y) is undefined and y
// is not.
void TermTable::fold_square_roots(Rational& coef, std::vector<std::pair<TermId, int64_t>>& kept) {
  std::vector<std::pair<TermId, int64_t>> extra;  // y^q, as y's own factors
  for (size_t i = 0; i < kept.size(); ++i) {
    const Node& n = nodes_[kept[i].first];
    if (n.kind != TK::App || static_cast<ir::Fn>(n.aux) != ir::Fn::sqrt) continue;
    const TermId y = n.args[0];
    const int64_t b = kept[i].second;
    const Node& yn = nodes_[y];
    // A sum with a scale of its own (sqrt(2a + 2b)) is left as it is: as a
    // factor it would need that scale taken out.
    if (yn.kind == TK::Sum && !(yn.args.size() == 1 && yn.nums.back().is_zero())) {
      const Rational lead = yn.nums[0] < Rational(0) ? -yn.nums[0] : yn.nums[0];
      if (!lead.is_one()) continue;
    }
    // y's own exponent in the product, when y is one factor of it.
    size_t j = kept.size();
    if (yn.kind != TK::Prod && yn.kind != TK::Const)
      for (size_t k = 0; k < kept.size(); ++k)
        if (kept[k].first == y) j = k;
    const int64_t a = j < kept.size() ? kept[j].second : 0;
    const int64_t h = 2 * a + b;
    const int64_t q = (h >= 0 ? h : h - 1) / 2, r = h - 2 * q;
    if (r == b && q == a) continue;
    if (r == 0 && !nonneg(y)) continue;
    kept[i].second = r;
    if (j < kept.size()) kept[j].second = 0;
    const Mon m = mon(y);
    for (int64_t k = 0; k < (q < 0 ? -q : q); ++k) coef = q < 0 ? coef * m.coef.inverse() : coef * m.coef;
    for (const auto& [f, e] : m.factors) extra.push_back({f, e * q});
  }
  if (extra.empty() && std::none_of(kept.begin(), kept.end(), [](const auto& f) { return f.second == 0; })) return;
  kept.insert(kept.end(), extra.begin(), extra.end());
  std::sort(kept.begin(), kept.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::pair<TermId, int64_t>> merged;
  for (const auto& [f, e] : kept) {
    if (!merged.empty() && merged.back().first == f) merged.back().second += e;
    else merged.push_back({f, e});
  }
  merged.erase(std::remove_if(merged.begin(), merged.end(), [](const auto& f) { return f.second == 0; }), merged.end());
  kept = std::move(merged);
}

namespace {
std::optional<int64_t> int_sqrt(int64_t n);
}  // namespace

// Integer-valued whatever its variables: integer constants, integer
// variables (ids, masks), indicators, truncations, and sums and products of
// such with integer coefficients and non-negative integer powers.
bool TermTable::integral(TermId t, int depth) const {
  const Node& n = nodes_[t];
  if (depth > 8) return false;
  switch (n.kind) {
    case TK::Const: return n.nums[0].is_int();
    case TK::IntVar:
    case TK::Ind: return true;
    case TK::App: return static_cast<ir::Fn>(n.aux) == ir::Fn::trunc;
    case TK::Prod:
      for (size_t k = 0; k < n.args.size(); ++k)
        if (!n.nums[k].is_int() || n.nums[k].sign() < 0 || !integral(n.args[k], depth + 1)) return false;
      return true;
    case TK::Sum: {
      Lin l = lin(t);
      if (!l.c.is_int()) return false;
      for (const auto& [x, c] : l.terms)
        if (!c.is_int() || !integral(x, depth + 1)) return false;
      return true;
    }
    default: return false;
  }
}

TermId TermTable::apply(ir::Fn f, TermId a) {
  Rational v;
  // A cast to an integer type keeps an integer and truncates anything else.
  if (f == ir::Fn::trunc) {
    if (is_const(a, &v)) return constant(v.trunc());
    if (integral(a)) return a;
  }
  // rsqrt(x) is 1/sqrt(x): one term for both ways of writing a norm.
  if (f == ir::Fn::rsqrt) return recip(apply(ir::Fn::sqrt, a));
  if (f == ir::Fn::exp && is_const(a, &v) && v.is_zero()) return one_;
  // sqrt(q^2 x) = q sqrt(x) for q > 0: the norm of gradients that carry a
  // loss scale (or 1/dp), taken before the scale is divided out or after.
  if (f == ir::Fn::sqrt && nodes_[a].kind == TK::Sum)
    if (const std::optional<Rational> q = square_content(a)) return scale(apply(f, scale(a, (*q * *q).inverse())), *q);
  // sqrt(1/4) = 1/2: the square root of a rational square (a bias correction
  // or 1/sqrt(H) written as a literal beside the spec's sqrt of a constant).
  if (f == ir::Fn::sqrt && is_const(a, &v) && v.is_small() && v.sign() > 0)
    if (const auto n = int_sqrt(v.num()), d = int_sqrt(v.den()); n && d) return constant(Rational(*n, *d));
  if (f == ir::Fn::log) {  // log(exp(x)) = x
    const Node& n = nodes_[a];
    if (n.kind == TK::App && static_cast<ir::Fn>(n.aux) == ir::Fn::exp) return n.args[0];
  }
  return intern(Node{TK::App, static_cast<int32_t>(f), {a}, {}});
}

namespace {

std::optional<int64_t> int_sqrt(int64_t n) {
  if (n < 0) return std::nullopt;
  auto r = static_cast<int64_t>(std::llround(std::sqrt(static_cast<long double>(n))));
  for (int64_t c = r > 0 ? r - 1 : 0; c <= r + 1; ++c)
    if (static_cast<__int128>(c) * c == n) return c;
  return std::nullopt;
}

// The largest q with q^2 dividing n > 0, from the primes under 2^10 and a
// cofactor that is itself a square (a larger prime squared may be missed:
// that only leaves two equal terms apart).
int64_t square_part(int64_t n) {
  if (n <= 0) return 1;
  int64_t q = 1;
  for (int64_t p = 2; p < 1024 && p * p <= n; ++p) {
    while (n % (p * p) == 0) {
      n /= p * p;
      q *= p;
    }
    while (n % p == 0) n /= p;
  }
  if (const auto r = int_sqrt(n); r && *r > 1) q *= *r;
  return q;
}

__int128 gcd128(__int128 a, __int128 b) {
  while (b) {
    const __int128 t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}

}  // namespace

// q > 0, q != 1, with q^2 the content of sum `s` (the largest rational that
// divides every coefficient to a whole number), where that content is a
// square of a rational. Only for a sum without a constant (a sum of squared
// gradients): normalizing `mean(x^2) + eps` inside every rsqrt of a norm
// layer moved eps's 10^6 into coefficients that overflowed downstream.
//
// A sum with a constant is scaled by q^2, q the square part of its constant's
// numerator (the largest integer square dividing it, from primes under 2^10
// and a square cofactor), where q^2 divides every coefficient's numerator:
// sqrt(4 (s + 1)) = 2 sqrt(s + 1) (rsqrt(4 s) meets rsqrt(s) / 2). The
// constant is the same however the polynomial is written (a variance in one
// pass or two), and every coefficient only shrinks: a square part of eps
// (1e-5) would have grown them past 64 bits downstream.
std::optional<Rational> TermTable::square_content(TermId s) const {
  const Node& n = nodes_[s];
  if (!n.nums.back().is_zero()) {
    const Rational& c = n.nums.back();
    if (n.nums.size() < 2) return std::nullopt;
    for (const Rational& r : n.nums)
      if (!r.is_small()) return std::nullopt;
    const int64_t q = square_part(c.num() < 0 ? -c.num() : c.num());
    if (q == 1 || q > (1 << 20)) return std::nullopt;
    for (const Rational& r : n.nums)
      if (r.num() % (q * q) != 0) return std::nullopt;
    return Rational(q);
  }
  // gcd of the numerators over lcm of the denominators, in 128 bits.
  __int128 num = 0, den = 1;
  for (const Rational& r : n.nums) {
    if (r.is_zero()) continue;
    if (!r.is_small()) return std::nullopt;
    num = gcd128(num, r.num());
    const __int128 g = gcd128(den, r.den());
    den = den / g * r.den();
    if (den > INT64_MAX) return std::nullopt;
  }
  if (num == 0 || (num == 1 && den == 1)) return std::nullopt;
  const auto qn = int_sqrt(static_cast<int64_t>(num)), qd = int_sqrt(static_cast<int64_t>(den));
  if (!qn || !qd || *qn > (1 << 20) || *qd > (1 << 20)) return std::nullopt;
  return Rational(*qn, *qd);
}

TermId TermTable::nary(TK kind, TermId a, TermId b) {
  std::vector<TermId> args;
  for (TermId t : {a, b}) {
    const Node& n = nodes_[t];
    if (n.kind == kind) args.insert(args.end(), n.args.begin(), n.args.end());
    else args.push_back(t);
  }
  std::sort(args.begin(), args.end());
  args.erase(std::unique(args.begin(), args.end()), args.end());
  // Constants fold into one.
  std::vector<TermId> rest;
  bool have_c = false;
  Rational c;
  for (TermId t : args) {
    Rational v;
    if (is_const(t, &v)) {
      if (!have_c || (kind == TK::Max ? c < v : v < c)) c = v;
      have_c = true;
    } else {
      rest.push_back(t);
    }
  }
  // max(n, c) with n a count (a sum of masks: a whole number >= 0) and
  // 0 < c <= 1 is n wherever n is not 0 (`torch.clamp(num_tokens, min=1)`
  // before a division the spec makes by n itself). Recorded as a cancelled
  // count that can be 0: verify then runs the case where counts are 0.
  if (kind == TK::Max && have_c && rest.size() == 1 && Rational(0) < c && !(Rational(1) < c) && is_count(rest[0]) &&
      zero_cancelled_.size() < 64) {
    if (std::find(zero_cancelled_.begin(), zero_cancelled_.end(), rest[0]) == zero_cancelled_.end())
      zero_cancelled_.push_back(rest[0]);
    return rest[0];
  }
  if (have_c) rest.push_back(constant(c));
  std::sort(rest.begin(), rest.end());
  if (rest.size() == 1) return rest[0];
  return intern(Node{kind, 0, std::move(rest), {}});
}

TermId TermTable::max(TermId a, TermId b) { return nary(TK::Max, a, b); }
TermId TermTable::min(TermId a, TermId b) { return nary(TK::Min, a, b); }

TermId TermTable::ind(TermId id, int64_t k) {
  Rational v;
  if (is_const(id, &v)) return (v.is_int() && v.is_small() && v.num() == k) ? one_ : zero_;
  const Node& n = nodes_[id];
  if (n.kind == TK::IntVar && !vars_[static_cast<size_t>(n.aux)].admits(k)) return zero_;
  return intern(Node{TK::Ind, 0, {id}, {Rational(k)}});
}

TermId TermTable::powc(TermId a, const Rational& e) {
  if (e.is_small() && e.is_int() && e.num() >= -16 && e.num() <= 16) return power(a, e.num());
  // x^(k/2) = sqrt(x)^k (x >= 0 wherever either is defined).
  if (e.is_small() && e.den() == 2 && e.num() >= -33 && e.num() <= 33) return power(apply(ir::Fn::sqrt, a), e.num());
  return intern(Node{TK::PowC, 0, {a}, {e}});
}

std::vector<TermId> TermTable::topk_mask(const std::vector<TermId>& row_in, int64_t k) {
  // One strictly increasing function applied to every entry keeps their
  // order and their ties, so it selects what its arguments select (so does
  // one positive scale and one shift of every entry): top-k of
  // sigmoid scores (DeepSeek's router as written) is top-k of the logits (as
  // Megatron computes it).
  std::vector<TermId> row = row_in;
  for (;;) {
    if (row.empty()) break;
    // A factor every entry has (same term, same power) that is positive
    // divides out: top-k of softmax probabilities, exp(x_i - m) / sum_j
    // exp(x_j - m), is top-k of the exps (then of the logits, below).
    if (row.size() > 1) {
      std::vector<Mon> ms;
      for (TermId t : row) ms.push_back(mon(t));
      std::vector<std::pair<TermId, int64_t>> common;
      for (const auto& f : ms[0].factors) {
        bool all = positive(f.first);
        for (size_t i = 1; all && i < ms.size(); ++i)
          all = std::find(ms[i].factors.begin(), ms[i].factors.end(), f) != ms[i].factors.end();
        if (all) common.push_back(f);
      }
      bool rest = !common.empty();  // no entry may be left without a factor of its own
      for (size_t i = 0; rest && i < ms.size(); ++i) rest = ms[i].factors.size() > common.size();
      if (rest) {
        for (size_t i = 0; i < row.size(); ++i) {
          auto& fs = ms[i].factors;
          for (const auto& f : common) fs.erase(std::find(fs.begin(), fs.end(), f));
          row[i] = make_prod(ms[i].coef, std::move(fs));
        }
        continue;
      }
    }
    // A term every entry adds (same term, same weight) is one shift of the
    // whole row: x_i - m, the row max taken off before a softmax.
    if (row.size() > 1) {
      std::vector<Lin> ls;
      for (TermId t : row) ls.push_back(lin(t));
      std::vector<std::pair<TermId, Rational>> common;
      for (const auto& x : ls[0].terms) {
        bool all = true;
        for (size_t i = 1; all && i < ls.size(); ++i)
          all = std::find(ls[i].terms.begin(), ls[i].terms.end(), x) != ls[i].terms.end();
        if (all) common.push_back(x);
      }
      bool rest = !common.empty();
      for (size_t i = 0; rest && i < ls.size(); ++i) rest = ls[i].terms.size() > common.size();
      if (rest) {
        for (size_t i = 0; i < row.size(); ++i) {
          auto& ts = ls[i].terms;
          for (const auto& x : common) ts.erase(std::find(ts.begin(), ts.end(), x));
          row[i] = make_sum(std::move(ts), ls[i].c);
        }
        continue;
      }
    }
    // c*u + d with one c > 0 and one d for the whole row (a route scale
    // applied before the selection) is strictly increasing in u too.
    {
      const Lin l0 = lin(row[0]);
      bool affine = l0.terms.size() == 1 && Rational(0) < l0.terms[0].second &&
                    !(l0.terms[0].second.is_one() && l0.c.is_zero());
      for (size_t i = 1; affine && i < row.size(); ++i) {
        const Lin l = lin(row[i]);
        affine = l.terms.size() == 1 && l.terms[0].second == l0.terms[0].second && l.c == l0.c;
      }
      if (affine) {
        for (TermId& t : row) t = lin(t).terms[0].first;
        continue;
      }
    }
    // One positive scale of the whole row, constants included (an entry of
    // 0 beside (sum(load) - E*load) where the spec has mean(load) - load:
    // DeepSeek's sign of a balance offset as top-1 of [0, v]): the row is
    // divided by the first coefficient of its first entry with a term.
    {
      Rational g(1);
      for (TermId t : row)
        if (const Lin l = lin(t); !l.terms.empty()) {
          g = l.terms[0].second < Rational(0) ? -l.terms[0].second : l.terms[0].second;
          break;
        }
      if (!g.is_one()) {
        const Rational inv = g.inverse();
        for (TermId& t : row) t = scale(t, inv);
        continue;
      }
    }
    const Node& first = nodes_[row[0]];
    const auto f = static_cast<ir::Fn>(first.aux);
    if (first.kind != TK::App || first.args.size() != 1 ||
        (f != ir::Fn::exp && f != ir::Fn::sigmoid && f != ir::Fn::tanh))
      break;
    bool same = true;
    for (TermId t : row) {
      const Node& n = nodes_[t];
      same &= n.kind == TK::App && n.aux == first.aux && n.args.size() == 1;
    }
    if (!same) break;
    for (TermId& t : row) t = nodes_[t].args[0];
  }
  std::vector<TermId> out;
  for (size_t i = 0; i < row.size(); ++i) out.push_back(intern(Node{TK::TopK, static_cast<int32_t>(i), row, {Rational(k)}}));
  return out;
}

TermId TermTable::mul_dist(TermId a, TermId b, size_t& budget) {
  Lin x = lin(a), y = lin(b);
  if (x.terms.empty() || y.terms.empty() || (x.terms.size() == 1 && x.c.is_zero() && y.terms.size() == 1 && y.c.is_zero()))
    return mul(a, b);
  std::vector<std::pair<TermId, Rational>> out;
  Rational c = x.c * y.c;
  for (auto& [t, r] : x.terms) out.push_back({t, r * y.c});
  for (auto& [t, r] : y.terms) out.push_back({t, r * x.c});
  for (auto& [t, r] : x.terms)
    for (auto& [u, s] : y.terms) {
      if (budget-- == 0) throw BudgetExceeded();
      Lin m = lin(mul(t, u));
      for (auto& [v, q] : m.terms) out.push_back({v, q * r * s});
      c = c + m.c * r * s;
    }
  return make_sum(std::move(out), c);
}

TermId TermTable::expand(TermId t, size_t budget) {
  if (auto it = expanded_.find(t); it != expanded_.end()) return it->second;
  Node n = nodes_[t];  // copy: interning may reallocate
  TermId r = t;
  switch (n.kind) {
    case TK::Const:
    case TK::Var:
    case TK::IntVar: break;
    case TK::Sum: {
      std::vector<TermId> parts;
      for (size_t k = 0; k < n.args.size(); ++k) parts.push_back(scale(expand(n.args[k], budget), n.nums[k]));
      parts.push_back(constant(n.nums.back()));
      r = sum(parts);
      break;
    }
    case TK::Prod: {
      r = one_;
      for (size_t k = 0; k < n.args.size(); ++k) {
        int64_t e = n.nums[k].num();
        TermId f = expand(n.args[k], budget);
        if (e < 0) {
          f = recip(f);
          e = -e;
        }
        for (int64_t j = 0; j < e; ++j) r = mul_dist(r, f, budget);
      }
      break;
    }
    case TK::App: r = apply(static_cast<ir::Fn>(n.aux), expand(n.args[0], budget)); break;
    case TK::Max:
    case TK::Min: {
      r = expand(n.args[0], budget);
      for (size_t k = 1; k < n.args.size(); ++k) r = nary(n.kind, r, expand(n.args[k], budget));
      break;
    }
    case TK::Ind: r = ind(expand(n.args[0], budget), n.nums[0].num()); break;
    case TK::PowC: r = powc(expand(n.args[0], budget), n.nums[0]); break;
    case TK::TopK: {
      std::vector<TermId> row;
      for (TermId a : n.args) row.push_back(expand(a, budget));
      r = topk_mask(row, n.nums[0].num())[static_cast<size_t>(n.aux)];
      break;
    }
  }
  expanded_[t] = r;
  return r;
}

void TermTable::collect_vars(TermId t, std::vector<uint32_t>& out) const {
  std::vector<TermId> stack{t};
  std::vector<bool> seen(nodes_.size(), false);
  while (!stack.empty()) {
    TermId x = stack.back();
    stack.pop_back();
    if (seen[x]) continue;
    seen[x] = true;
    const Node& n = nodes_[x];
    if (n.kind == TK::Var || n.kind == TK::IntVar) out.push_back(static_cast<uint32_t>(n.aux));
    for (TermId a : n.args) stack.push_back(a);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

void TermTable::str_rec(TermId t, std::string& out, int max_len, int depth) const {
  if (static_cast<int>(out.size()) > max_len) return;
  const Node& n = nodes_[t];
  switch (n.kind) {
    case TK::Const: out += n.nums[0].str(); return;
    case TK::Var:
    case TK::IntVar: out += vars_[static_cast<size_t>(n.aux)].name; return;
    case TK::Sum: {
      out += "(";
      bool first = true;
      for (size_t k = 0; k < n.args.size(); ++k) {
        const Rational& c = n.nums[k];
        if (!first) out += c < Rational(0) ? " - " : " + ";
        else if (c < Rational(0)) out += "-";
        Rational a = c < Rational(0) ? -c : c;
        if (!a.is_one()) out += a.str() + "*";
        str_rec(n.args[k], out, max_len, depth + 1);
        first = false;
        if (static_cast<int>(out.size()) > max_len) return;
      }
      if (!n.nums.back().is_zero()) out += (n.nums.back() < Rational(0) ? " - " : " + ") + (n.nums.back() < Rational(0) ? -n.nums.back() : n.nums.back()).str();
      out += ")";
      return;
    }
    case TK::Prod: {
      for (size_t k = 0; k < n.args.size(); ++k) {
        if (k) out += "*";
        str_rec(n.args[k], out, max_len, depth + 1);
        if (!n.nums[k].is_one()) out += "^" + n.nums[k].str();
      }
      return;
    }
    case TK::App:
      out += std::string(ir::fn_name(static_cast<ir::Fn>(n.aux))) + "(";
      str_rec(n.args[0], out, max_len, depth + 1);
      out += ")";
      return;
    case TK::Max:
    case TK::Min:
      out += n.kind == TK::Max ? "max(" : "min(";
      for (size_t k = 0; k < n.args.size(); ++k) {
        if (k) out += ", ";
        str_rec(n.args[k], out, max_len, depth + 1);
      }
      out += ")";
      return;
    case TK::Ind:
      out += "[";
      str_rec(n.args[0], out, max_len, depth + 1);
      out += "==" + n.nums[0].str() + "]";
      return;
    case TK::PowC:
      out += "pow(";
      str_rec(n.args[0], out, max_len, depth + 1);
      out += ", " + n.nums[0].str() + ")";
      return;
    case TK::TopK:
      out += "topk" + n.nums[0].str() + "_" + std::to_string(n.aux) + "(...)";
      return;
  }
}

std::string TermTable::diff(TermId a, TermId b, int max_len) const {
  if (a == b) return "";
  const Node& x = nodes_[a];
  const Node& y = nodes_[b];
  if (x.kind == y.kind && x.kind == TK::Sum && x.nums.back() == y.nums.back()) {
    std::map<TermId, Rational> mx, my;
    for (size_t k = 0; k < x.args.size(); ++k) mx[x.args[k]] = x.nums[k];
    for (size_t k = 0; k < y.args.size(); ++k) my[y.args[k]] = y.nums[k];
    std::vector<std::pair<TermId, Rational>> only_x, only_y;
    for (auto& [t, c] : mx)
      if (!my.count(t) || !(my[t] == c)) only_x.push_back({t, c});
    for (auto& [t, c] : my)
      if (!mx.count(t) || !(mx[t] == c)) only_y.push_back({t, c});
    if (only_x.size() == 1 && only_y.size() == 1 && only_x[0].second == only_y[0].second)
      return diff(only_x[0].first, only_y[0].first, max_len);
    std::string s = "the sums share " + std::to_string(mx.size() - only_x.size()) + " terms; spec also has:";
    for (size_t k = 0; k < only_x.size() && k < 4; ++k) s += " " + (only_x[k].second.is_one() ? "" : only_x[k].second.str() + "*") + str(only_x[k].first, 120) + ";";
    if (only_x.size() > 4) s += " ... (" + std::to_string(only_x.size()) + " terms)";
    if (only_x.empty()) s += " nothing;";
    s += " plan also has:";
    for (size_t k = 0; k < only_y.size() && k < 4; ++k) s += " " + (only_y[k].second.is_one() ? "" : only_y[k].second.str() + "*") + str(only_y[k].first, 120) + ";";
    if (only_y.size() > 4) s += " ... (" + std::to_string(only_y.size()) + " terms)";
    if (only_y.empty()) s += " nothing";
    return s.size() > static_cast<size_t>(max_len) ? s.substr(0, static_cast<size_t>(max_len)) + " ..." : s;
  }
  if (x.kind == y.kind && x.args.size() == y.args.size() && x.aux == y.aux && x.nums == y.nums &&
      (x.kind == TK::Prod || x.kind == TK::App || x.kind == TK::Max || x.kind == TK::Min || x.kind == TK::Ind)) {
    int differing = 0;
    size_t at = 0;
    for (size_t k = 0; k < x.args.size(); ++k)
      if (x.args[k] != y.args[k]) ++differing, at = k;
    if (differing == 1) return diff(x.args[at], y.args[at], max_len);
  }
  // Sums that differ only by a constant factor read best as a ratio.
  Mon mx = mon(a), my = mon(b);
  if (mx.factors == my.factors && !(mx.coef == my.coef))
    return "same term, scaled by " + mx.coef.str() + " in the spec and " + my.coef.str() + " in the plan: " + str(a, 200);
  return "spec " + str(a, max_len / 2) + "  vs  plan " + str(b, max_len / 2);
}

std::string TermTable::str(TermId t, int max_len) const {
  std::string s;
  str_rec(t, s, max_len, 0);
  if (static_cast<int>(s.size()) > max_len) s = s.substr(0, static_cast<size_t>(max_len)) + " ...";
  return s;
}

}  // namespace parity::verify
