// Equality by parts: two terms that differ somewhere inside a large shared
// structure (a router's backward `s*(1-s)*g` where the plan writes
// `(s - s^2)*g`, g a long gradient sum) are compared part by part, and only
// the parts that differ are expanded. Expanding the whole pair would
// distribute g and run past any budget.
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "verify/term.h"

namespace parity::verify {

namespace {

constexpr uint64_t kP =
    (uint64_t{1} << 61) - 1;  // a Mersenne prime: fingerprints are values mod it

uint64_t mulmod(uint64_t a, uint64_t b) {
  const unsigned __int128 x = static_cast<unsigned __int128>(a) * b;
  uint64_t r = static_cast<uint64_t>(x & kP) + static_cast<uint64_t>(x >> 61);
  return r >= kP ? r - kP : r;
}

uint64_t addmod(uint64_t a, uint64_t b) {
  uint64_t r = a + b;
  return r >= kP ? r - kP : r;
}

uint64_t powmod(uint64_t a, uint64_t e) {
  uint64_t r = 1;
  for (; e; e >>= 1, a = mulmod(a, a))
    if (e & 1) r = mulmod(r, a);
  return r;
}

uint64_t of_rational(const Rational& r) {
  const auto [n, d] = r.residue(kP);
  return mulmod(n, powmod(d, kP - 2));
}

// Of two id-sorted lists of (part, weight), the parts both hold with the
// same weight cancel; what is left of each goes to `ra` and `rb`.
template <class W>
void cancel_shared(const std::vector<std::pair<TermId, W>>& x,
                   const std::vector<std::pair<TermId, W>>& y,
                   std::vector<std::pair<TermId, W>>& ra, std::vector<std::pair<TermId, W>>& rb) {
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (j == y.size() || (i < x.size() && x[i].first < y[j].first)) {
      ra.push_back(x[i++]);
    } else if (i == x.size() || y[j].first < x[i].first) {
      rb.push_back(y[j++]);
    } else {
      if (!(x[i].second == y[j].second)) {
        ra.push_back(x[i]);
        rb.push_back(y[j]);
      }
      ++i, ++j;
    }
  }
}

uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  return h % kP;
}

}  // namespace

// The value of a term at one random point mod p: sums and products are
// evaluated, everything else (functions, max, top-k) is hashed from its
// parts' values. Only a guide for pairing parts; nothing is proved by it.
uint64_t TermTable::fingerprint(TermId t) {
  // Children have smaller ids: fill the prefix in order, no recursion.
  for (TermId x = static_cast<TermId>(fp_.size()); x <= t; ++x) {
    const Node& n = nodes_[x];
    uint64_t v = 0;
    switch (n.kind) {
      case TK::Const:
        v = of_rational(n.nums[0]);
        break;
      case TK::Var:
      case TK::IntVar:
        v = mix(0x51ed27f1ull, static_cast<uint64_t>(n.aux));
        break;
      case TK::Sum:
        v = of_rational(n.nums.back());
        for (size_t k = 0; k < n.args.size(); ++k)
          v = addmod(v, mulmod(of_rational(n.nums[k]), fp_[n.args[k]]));
        break;
      case TK::Prod:
        v = 1;
        for (size_t k = 0; k < n.args.size(); ++k) {
          const int64_t e = n.nums[k].num();
          uint64_t f = fp_[n.args[k]];
          if (e < 0) f = f == 0 ? mix(0x0d1full, n.args[k]) : powmod(f, kP - 2);
          v = mulmod(v, powmod(f, static_cast<uint64_t>(e < 0 ? -e : e)));
        }
        break;
      default: {
        std::vector<uint64_t> parts;
        for (TermId a : n.args) parts.push_back(fp_[a]);
        if (n.kind == TK::Max || n.kind == TK::Min) std::sort(parts.begin(), parts.end());
        v = mix(static_cast<uint64_t>(n.kind), static_cast<uint64_t>(n.aux));
        for (uint64_t p : parts) v = mix(v, p);
        for (const Rational& r : n.nums) v = mix(v, of_rational(r));
      }
    }
    fp_.push_back(v);
  }
  return fp_[t];
}

bool TermTable::dag_within(TermId t, size_t limit) const {
  std::vector<TermId> todo{t};
  std::unordered_map<TermId, bool> seen;
  while (!todo.empty()) {
    TermId x = todo.back();
    todo.pop_back();
    if (!seen.emplace(x, true).second) continue;
    if (seen.size() > limit) return false;
    for (TermId a : nodes_[x].args) todo.push_back(a);
  }
  return true;
}

bool TermTable::expand_equal(TermId a, TermId b, size_t budget) {
  if (a == b) return true;
  // A large pair that differs is most likely a real difference: expanding
  // it could take minutes.
  if (!dag_within(a, 300) || !dag_within(b, 300)) return false;
  try {
    return expand(a, budget) == expand(b, budget);
  } catch (const BudgetExceeded&) {
  } catch (const NotSmall&) {
  }
  return false;
}

bool TermTable::equal_by_parts(TermId a, TermId b, size_t budget) {
  if (budget == 0)
    return a == b;  // expansion turned off (`--expand-budget 0`): by parts is a form of it
  size_t steps = 0;
  try {
    if (parts_equal(a, b, budget, steps, 0)) return true;
    // Then under the exp-shift normal form (term_exp.cpp): a softmax or a
    // log-sum-exp shifted by another max than the spec's.
    const TermId na = exp_normal(a), nb = exp_normal(b);
    if (na == a && nb == b) return false;
    steps = 0;
    return na == nb || parts_equal(na, nb, budget, steps, 0);
  } catch (const NotSmall&) {
    return false;
  }
}

// Each product with one sum factor (to the first power) is distributed
// over that sum, one level only: `N^-1 * (a + b)` becomes `a*N^-1 + b*N^-1`.
// False when no term has such a factor or the sums are too long.
bool TermTable::distribute_once(std::vector<std::pair<TermId, Rational>>& terms, Rational& c) {
  std::vector<std::pair<TermId, Rational>> out;
  bool changed = false;
  for (const auto& [t, w] : terms) {
    const Node n = nodes_[t];
    int at = -1;
    if (n.kind == TK::Prod)
      for (size_t k = 0; k < n.args.size(); ++k) {
        const Node& f = nodes_[n.args[k]];
        if (f.kind != TK::Sum || !n.nums[k].is_one() || f.args.size() > 100000) continue;
        at = at < 0 ? static_cast<int>(k) : -2;
        if (at == -2) break;
      }
    if (at < 0) {
      out.push_back({t, w});
      continue;
    }
    std::vector<std::pair<TermId, int64_t>> rest;
    for (size_t k = 0; k < n.args.size(); ++k)
      if (static_cast<int>(k) != at) rest.push_back({n.args[k], n.nums[k].num()});
    const TermId m = make_prod(Rational(1), std::move(rest));
    const Lin inner = lin(n.args[static_cast<size_t>(at)]);
    auto push = [&](TermId u, const Rational& q) {
      const Lin l = lin(u);
      for (const auto& [v, r] : l.terms) out.push_back({v, r * q});
      c = c + l.c * q;
    };
    for (const auto& [u, q] : inner.terms) push(mul(m, u), q * w);
    if (!inner.c.is_zero()) push(m, inner.c * w);
    changed = true;
  }
  if (changed) terms = std::move(out);
  return changed;
}

// `t` written as g^e * t' (t' in `out`) by taking g^e out of every term of
// its sums and out of one linear factor of its products: a factor the plan
// applies once after its sums (1/N after the gradients are reduced) where
// the spec applies it inside (1/N on each token's loss, carried through the
// backward). Only takes out what is there (a factor g^e' with e' of e's sign
// and at least its size), so nothing is divided by a term that can be 0.
std::optional<TermId> TermTable::take_out(TermId t, TermId g, int64_t e,
                                          std::unordered_map<TermId, std::optional<TermId>>& memo,
                                          size_t& work) {
  if (auto it = memo.find(t); it != memo.end()) return it->second;
  std::optional<TermId> r;
  if (++work <= 400000) {
    const Node n = nodes_[t];
    if (n.kind == TK::Sum) {
      if (n.nums.back().is_zero()) {
        std::vector<std::pair<TermId, Rational>> terms;
        for (size_t k = 0; k < n.args.size(); ++k) {
          std::optional<TermId> u = take_out(n.args[k], g, e, memo, work);
          if (!u) break;
          terms.push_back({*u, n.nums[k]});
        }
        if (terms.size() == n.args.size()) {
          std::vector<TermId> parts;
          for (const auto& [u, q] : terms) parts.push_back(scale(u, q));
          r = sum(parts);
        }
      }
    } else {
      Mon m = mon(t);
      for (auto& [f, x] : m.factors)
        if (f == g && (x > 0) == (e > 0) && (x > 0 ? x >= e : x <= e)) {
          x -= e;
          r = make_prod(m.coef, m.factors);
          break;
        }
      for (size_t k = 0; !r && k < m.factors.size(); ++k) {
        if (m.factors[k].second != 1 || nodes_[m.factors[k].first].kind != TK::Sum) continue;
        if (std::optional<TermId> u = take_out(m.factors[k].first, g, e, memo, work)) {
          auto fs = m.factors;
          fs[k].first = *u;
          r = make_prod(m.coef, std::move(fs));
        }
      }
    }
  }
  memo.emplace(t, r);
  return r;
}

// A product against another term that holds its factors deeper inside:
// each factor of the product that is not a sum to the first power is taken
// out of the other term, and what is left is compared.
bool TermTable::factors_taken_out(TermId prod, TermId other, size_t budget, size_t& steps,
                                  int depth) {
  Mon m = mon(prod);
  std::vector<std::pair<TermId, int64_t>> kept;
  TermId rest = other;
  size_t work = 0;
  for (const auto& [f, x] : m.factors) {
    if (x == 1 && nodes_[f].kind == TK::Sum) {
      kept.push_back({f, x});
      continue;
    }
    std::unordered_map<TermId, std::optional<TermId>> memo;
    std::optional<TermId> u = take_out(rest, f, x, memo, work);
    if (!u) return false;
    rest = *u;
  }
  if (kept.size() == m.factors.size()) return false;
  return parts_equal(rest, make_prod(m.coef, std::move(kept)), budget, steps, depth + 1);
}

// Appends the terms of `key * (sum of rests)` to `out`.
void TermTable::push_grouped(std::vector<std::pair<TermId, int64_t>> key,
                             const std::vector<TermId>& rests,
                             std::vector<std::pair<TermId, Rational>>& out) {
  key.push_back({sum(rests), 1});
  const Lin l = lin(make_prod(Rational(1), std::move(key)));
  out.insert(out.end(), l.terms.begin(), l.terms.end());
  if (!l.c.is_zero()) out.push_back({constant(l.c), Rational(1)});
}

// Groups `terms` by the factors in `shared` (regroup), or else first by
// their own most frequent factors (gather) and then by those.
bool TermTable::group_like(std::vector<std::pair<TermId, Rational>>& terms,
                           const std::unordered_set<TermId>& shared) {
  if (regroup(terms, shared)) return true;
  if (!gather(terms)) return false;
  regroup(terms, shared);
  return true;
}

// The inverse of distribute_once: terms that share factors with the other
// side's terms (`shared`, by id) are grouped by those factors and the rest
// of each group summed: `sel*p0 + sel*p1` becomes `sel*(p0 + p1)` where the
// other side has `sel*p` (a load-balancing loss summed over ranks' token
// shards, where the spec sums the tokens first). False when no two terms
// share the same factors.
bool TermTable::regroup(std::vector<std::pair<TermId, Rational>>& terms,
                        const std::unordered_set<TermId>& shared) {
  std::map<std::vector<std::pair<TermId, int64_t>>, std::vector<TermId>> groups;
  std::vector<std::vector<std::pair<TermId, int64_t>>> order;
  std::vector<std::pair<TermId, Rational>> out;  // terms that share nothing stay as they are
  for (const auto& [t, w] : terms) {
    Mon m = mon(t);
    std::vector<std::pair<TermId, int64_t>> key, rest;
    for (const auto& f : m.factors) (shared.count(f.first) ? key : rest).push_back(f);
    if (key.empty()) {
      out.push_back({t, w});
      continue;
    }
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(make_prod(m.coef * w, std::move(rest)));
  }
  if (groups.size() + out.size() == terms.size()) return false;
  for (const auto& key : order) push_grouped(key, groups.at(key), out);
  terms = std::move(out);
  return true;
}

// Terms grouped by their most frequent factor, again and again while one is
// shared by two terms: `P0*S0 + P0*S1 + P1*S0 + P1*S1` becomes
// `P0*(S0 + S1) + P1*(S0 + S1)` (partial sums of a product reduced over two
// axes, each factor over one), which regroup() then takes to `(S0 + S1)*(P0 + P1)`.
bool TermTable::gather(std::vector<std::pair<TermId, Rational>>& terms) {
  bool changed = false;
  for (int round = 0; round < 64 && terms.size() > 1; ++round) {
    std::map<std::pair<TermId, int64_t>, size_t> count;
    std::vector<Mon> mons;
    for (const auto& [t, w] : terms) {
      mons.push_back(mon(t));
      for (const auto& f : mons.back().factors) ++count[f];
    }
    auto best = count.end();
    for (auto it = count.begin(); it != count.end(); ++it)
      if (it->second >= 2 && (best == count.end() || it->second > best->second)) best = it;
    if (best == count.end()) break;
    const std::pair<TermId, int64_t> f = best->first;
    std::vector<std::pair<TermId, Rational>> out;
    std::vector<TermId> with;
    for (size_t i = 0; i < terms.size(); ++i) {
      auto& fs = mons[i].factors;
      auto it = std::find(fs.begin(), fs.end(), f);
      if (it == fs.end()) {
        out.push_back(terms[i]);
        continue;
      }
      fs.erase(it);
      with.push_back(make_prod(mons[i].coef * terms[i].second, std::move(fs)));
    }
    push_grouped({f}, with, out);
    if (out.size() >= terms.size()) break;
    terms = std::move(out);
    changed = true;
  }
  return changed;
}

bool TermTable::parts_equal(TermId a, TermId b, size_t budget, size_t& steps, int depth) {
  if (a == b) return true;
  if (++steps > 20000 || fingerprint(a) != fingerprint(b)) return expand_equal(a, b, budget);
  const Node na = nodes_[a], nb = nodes_[b];  // copies: interning may reallocate
  auto is_sum = [](const Node& n) {
    return n.kind == TK::Sum && !(n.args.size() == 1 && n.nums.back().is_zero());
  };
  // Pairs parts left after the shared ones cancel, by fingerprint and by
  // `same` (coefficient or exponent); each pair must be equal by parts.
  auto pair_up = [&](const auto& ra, const auto& rb) {
    if (ra.size() != rb.size()) return false;
    std::unordered_multimap<uint64_t, size_t> by_fp;
    for (size_t j = 0; j < rb.size(); ++j) by_fp.emplace(fingerprint(rb[j].first), j);
    std::vector<bool> used(rb.size(), false);
    for (const auto& [t, w] : ra) {
      bool found = false;
      auto [lo, hi] = by_fp.equal_range(fingerprint(t));
      for (auto it = lo; it != hi && !found; ++it)
        if (!used[it->second] && rb[it->second].second == w &&
            parts_equal(t, rb[it->second].first, budget, steps, depth))
          found = used[it->second] = true;
      if (!found) return false;
    }
    return true;
  };
  if (is_sum(na) && is_sum(nb)) {
    Lin x = lin(a), y = lin(b);
    std::vector<std::pair<TermId, Rational>> ra, rb;
    cancel_shared(x.terms, y.terms, ra, rb);
    if (x.c == y.c && pair_up(ra, rb)) return true;
    // A factor moved out of a sum on one side (a loss divided by the token
    // count after the gradients are summed, where the spec divides each
    // term): the side with fewer terms is distributed one level.
    if (depth < 3 && ra.size() != rb.size()) {
      auto fewer = ra.size() < rb.size() ? ra : rb, more = ra.size() < rb.size() ? rb : ra;
      Rational cf = ra.size() < rb.size() ? x.c : y.c, cm = ra.size() < rb.size() ? y.c : x.c;
      auto d = fewer;
      Rational cd = cf;
      if (distribute_once(d, cd) &&
          parts_equal(make_sum(d, cd), make_sum(more, cm), budget, steps, depth + 1))
        return true;
      // Or the other way: the longer side's terms grouped by the factors
      // they share with the shorter side's.
      std::unordered_set<TermId> shared;
      for (const auto& [t, w] : fewer)
        for (const auto& f : mon(t).factors) shared.insert(f.first);
      if (group_like(more, shared) &&
          parts_equal(make_sum(fewer, cf), make_sum(more, cm), budget, steps, depth + 1))
        return true;
    }
    return expand_equal(make_sum(std::move(ra), x.c), make_sum(std::move(rb), y.c), budget);
  }
  if (!is_sum(na) && !is_sum(nb) &&
      (na.kind == TK::Prod || nb.kind == TK::Prod || na.kind == TK::Sum || nb.kind == TK::Sum)) {
    Mon x = mon(a), y = mon(b);
    std::vector<std::pair<TermId, int64_t>> ra, rb;
    cancel_shared(x.factors, y.factors, ra, rb);
    if (x.coef == y.coef && pair_up(ra, rb)) return true;
    const TermId pa = make_prod(x.coef, std::move(ra)), pb = make_prod(y.coef, std::move(rb));
    if (expand_equal(pa, pb, budget)) return true;
    return depth < 3 && (factors_taken_out(pb, pa, budget, steps, depth) ||
                         factors_taken_out(pa, pb, budget, steps, depth));
  }
  if (na.kind == TK::App && nb.kind == TK::App && na.aux == nb.aux)
    return parts_equal(na.args[0], nb.args[0], budget, steps, depth);
  // A sum against a product: the product's other factors taken out of the
  // sum; or the sum's terms grouped, by the product's factors or by their
  // own most frequent ones and then by the product's; or the product
  // distributed one level over its sum factor.
  if (depth < 3 && is_sum(na) != is_sum(nb)) {
    const TermId sm = is_sum(na) ? a : b, p = is_sum(na) ? b : a;
    if (factors_taken_out(p, sm, budget, steps, depth)) return true;
    Lin l = lin(sm);
    std::unordered_set<TermId> shared;
    for (const auto& f : mon(p).factors) shared.insert(f.first);
    if (group_like(l.terms, shared) &&
        parts_equal(make_sum(std::move(l.terms), l.c), p, budget, steps, depth + 1))
      return true;
    Lin d = lin(p);
    if (distribute_once(d.terms, d.c))
      return parts_equal(sm, make_sum(std::move(d.terms), d.c), budget, steps, depth + 1);
  }
  return expand_equal(a, b, budget);
}

}  // namespace parity::verify
