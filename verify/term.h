// Hash-consed symbolic terms over the reals, built in a canonical form so that
// most equalities between spec and plan are decided by comparing ids:
//  - sums are flat linear combinations with exact rational coefficients
//    (associativity, commutativity, constant distribution: partial sums);
//  - products are flat with integer exponents; exp factors merge
//    (exp(a) * exp(b) = exp(a + b), the identity behind softmax rescaling);
//  - max/min are flat, sorted and deduplicated (assoc., comm., idempotent);
//  - transcendental functions are uninterpreted applications.
// Products are not distributed over sums here (that blows up); `expand` does it
// on demand, under a budget, for the pairs that did not match.
#pragma once
#include <stdexcept>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/semantics.h"
#include "verify/rational.h"

namespace parity::verify {

using TermId = uint32_t;

enum class TK : uint8_t { Const, Var, IntVar, Sum, Prod, App, Max, Min, Ind, PowC, TopK };

struct Node {
  TK kind;
  int32_t aux = 0;           // Var/IntVar: variable index; App: Fn; TopK: position
  std::vector<TermId> args;  // children (ids smaller than this node's)
  // Const: value; Sum: coeffs + constant; Prod: exponents; Ind: k; PowC: e; TopK: k
  std::vector<Rational> nums;
};

struct VarInfo {
  std::string name;
  bool integer = false;  // token ids / labels: integers in [lo, hi), or one of `extra`
  bool boolean = false;  // masks: 0 or 1
  int64_t lo = 0, hi = 0;
  std::vector<int64_t> extra;  // ids outside the range the spec tests for (an ignore_index of -100)
  bool admits(int64_t k) const {
    return (k >= lo && k < hi) || std::find(extra.begin(), extra.end(), k) != extra.end();
  }
};

struct BudgetExceeded : std::runtime_error {
  BudgetExceeded() : std::runtime_error("expansion budget exceeded") {}
};

// The terms of one table grew past the memory set aside for them
// (TermTable::limit_bytes): the check that built them gives up.
struct TermLimit : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class TermTable {
 public:
  TermTable();
  // Past about this many bytes of nodes, interning throws TermLimit (a
  // proof that is only worth trying when it is cheap: the layer fold's).
  void limit_bytes(size_t b) { max_bytes_ = b; }
  const Node& node(TermId t) const { return nodes_[t]; }
  size_t size() const { return nodes_.size(); }
  const std::vector<VarInfo>& vars() const { return vars_; }
  // Denominators that `y * y^-1 = 1` cancelled although they can be 0 (a
  // count of tokens: a sum of masks), in first-met order, at most 64. The
  // identity then holds only where they are not 0: verify runs such a plan
  // at a point where masks are mostly off (docs/soundness.md).
  const std::vector<TermId>& zero_cancelled() const { return zero_cancelled_; }

  TermId constant(const Rational& r);
  TermId var(const std::string& name);
  TermId int_var(const std::string& name, int64_t lo, int64_t hi, std::vector<int64_t> extra = {});
  TermId bool_var(const std::string& name);

  TermId add(TermId a, TermId b);
  TermId sum(const std::vector<TermId>& ts);
  TermId scale(TermId a, const Rational& c);
  TermId mul(TermId a, TermId b);
  TermId power(TermId a, int64_t e);
  TermId recip(TermId a);
  TermId apply(ir::Fn f, TermId a);
  TermId max(TermId a, TermId b);
  TermId min(TermId a, TermId b);
  TermId ind(TermId id, int64_t k);
  TermId powc(TermId a, const Rational& e);
  std::vector<TermId> topk_mask(const std::vector<TermId>& row, int64_t k);

  // Fully distributes products over sums (recursively, inside function
  // arguments too). Throws BudgetExceeded past `budget` new monomials.
  TermId expand(TermId t, size_t budget);
  // Whether `a` and `b` are equal by expansion, compared part by part: the
  // parts they share cancel, the rest pair up by their value at a random
  // point, and only pairs that still differ are expanded (those of at most
  // 300 nodes, under `budget`). False when that does not show it.
  bool equal_by_parts(TermId a, TermId b, size_t budget);
  // The exp-shift normal form (term_exp.cpp): a sum of exp terms has the
  // part their arguments share taken out, log takes an exp factor out of
  // its argument; a softmax no longer depends on its shift.
  TermId exp_normal(TermId t);

  std::string str(TermId t, int max_len = 400) const;
  // Where two terms differ, descending through the parts they share: the
  // smallest differing subterms, readable when the whole terms are not.
  std::string diff(TermId spec, TermId plan, int max_len = 600) const;
  bool is_const(TermId t, Rational* v = nullptr) const;
  // Evaluates every term under values for the variables (vals[var index]).
  template <class F>
  std::vector<F> eval_all(const std::vector<F>& var_vals) const;
  void collect_vars(TermId t, std::vector<uint32_t>& out) const;

 private:
  TermId intern(Node n);
  struct Lin {
    std::vector<std::pair<TermId, Rational>> terms;  // sorted by id
    Rational c;
  };
  Lin lin(TermId t) const;
  TermId make_sum(std::vector<std::pair<TermId, Rational>> terms, const Rational& c);
  void complete_topk_rows(Node& n, Rational& c);
  struct Mon {
    Rational coef;
    std::vector<std::pair<TermId, int64_t>> factors;  // sorted by id
  };
  Mon mon(TermId t) const;
  TermId make_prod(Rational coef, std::vector<std::pair<TermId, int64_t>> factors);
  TermId nary(TK kind, TermId a, TermId b);
  TermId mul_dist(TermId a, TermId b, size_t& budget);
  uint64_t fingerprint(TermId t);
  bool dag_within(TermId t, size_t limit) const;
  bool expand_equal(TermId a, TermId b, size_t budget);
  bool parts_equal(TermId a, TermId b, size_t budget, size_t& steps, int depth);
  bool distribute_once(std::vector<std::pair<TermId, Rational>>& terms, Rational& c);
  bool regroup(std::vector<std::pair<TermId, Rational>>& terms,
               const std::unordered_set<TermId>& shared);
  bool gather(std::vector<std::pair<TermId, Rational>>& terms);
  bool group_like(std::vector<std::pair<TermId, Rational>>& terms,
                  const std::unordered_set<TermId>& shared);
  void push_grouped(std::vector<std::pair<TermId, int64_t>> key, const std::vector<TermId>& rests,
                    std::vector<std::pair<TermId, Rational>>& out);
  std::optional<TermId> take_out(TermId t, TermId g, int64_t e,
                                 std::unordered_map<TermId, std::optional<TermId>>& memo,
                                 size_t& work);
  bool factors_taken_out(TermId prod, TermId other, size_t budget, size_t& steps, int depth);
  std::optional<TermId> exp_factor_arg(TermId t) const;
  std::optional<Rational> square_content(TermId s) const;
  TermId take_out_shared_exp(TermId s);
  TermId take_out_logs(TermId e);
  TermId take_out_shared_factors(TermId s);
  TermId complete_indicators(TermId s);
  std::optional<size_t> complete_id_indicator(const Mon& m) const;
  TermId log_of_product(TermId x);
  std::unordered_map<TermId, TermId> exp_normal_;
  std::vector<uint64_t> fp_;  // fingerprints of ids [0, size), filled on demand
  void str_rec(TermId t, std::string& out, int max_len, int depth) const;

  std::vector<Node> nodes_;
  size_t bytes_ = 0, max_bytes_ = SIZE_MAX;
  std::vector<VarInfo> vars_;
  std::vector<TermId> zero_cancelled_;
  bool bit_sum_range(TermId t, bool whole, Rational& lo, Rational& hi) const;
  bool is_bit(TermId t, int depth) const;  // 0 or 1 for every value of its variables
  bool can_be_zero(TermId t) const;
  bool masked_positive(TermId t, int depth = 0) const;  // >= 0, and 0 where its masks are
  bool is_count(TermId t) const;  // a whole number >= 0: a sum of masks with whole coefficients
  bool nonneg(TermId t, int depth = 0) const;
  bool positive(TermId t, int depth = 0) const;  // > 0 for every value of its variables
  bool integral(TermId t, int depth = 0) const;  // an integer for every value of its variables
  void fold_square_roots(Rational& coef, std::vector<std::pair<TermId, int64_t>>& kept);
  // Hash-consing by structure: an open-addressing table of (hash, id), a
  // power of two in size and at most half full (one or two cache misses a
  // lookup where a node-based map took four).
  struct Slot {
    uint64_t hash = 0;
    TermId id = ~TermId{0};
  };
  std::vector<Slot> index_;
  void grow_index();
  std::unordered_map<TermId, TermId> expanded_;
  std::unordered_map<TermId, TermId>
      units_;  // a sum factor scaled to lead coefficient +-1 (make_prod)
  TermId zero_, one_;
};

// The element domain for ir::eval_local over terms.
struct TermDomain {
  using S = TermId;
  TermTable& t;
  // Literal values of scalar attributes read as indeterminates, one variable
  // a value, spec and plan alike (docs/soundness.md, "Literals read as indeterminates").
  const std::set<double>* literals = nullptr;
  std::map<double, TermId> literal_vars{};
  S c(double v) { return t.constant(Rational::from_double(v)); }
  S literal(double v) {
    if (!literals || !literals->count(v)) return c(v);
    auto it = literal_vars.find(v);
    if (it == literal_vars.end()) {
      char name[48];
      std::snprintf(name, sizeof name, "literal %.17g", v);
      it = literal_vars.emplace(v, t.var(name)).first;
    }
    return it->second;
  }
  S add(S a, S b) { return t.add(a, b); }
  S sub(S a, S b) { return t.add(a, t.scale(b, Rational(-1))); }
  S mul(S a, S b) { return t.mul(a, b); }
  S div(S a, S b) { return t.mul(a, t.recip(b)); }
  S neg(S a) { return t.scale(a, Rational(-1)); }
  S sum(const std::vector<S>& v) { return t.sum(v); }
  S apply(ir::Fn f, S a) { return t.apply(f, a); }
  S max(S a, S b) { return t.max(a, b); }
  S min(S a, S b) { return t.min(a, b); }
  S ind(S id, int64_t k) { return t.ind(id, k); }
  S powc(S a, double e) { return t.powc(a, Rational::from_double(e)); }
  std::vector<S> topk_mask(const std::vector<S>& row, int64_t k) { return t.topk_mask(row, k); }
};

}  // namespace parity::verify

#include "verify/term_eval.h"
