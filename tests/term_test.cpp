// Canonical forms of terms (verify/term.h): a sum that is a factor of a
// product carries no coefficient of its own, so a scale applied inside a sum
// and the same scale outside it are one term; a different scale is not.
#include <gtest/gtest.h>

#include "verify/term.h"

using namespace parity::verify;

namespace {

TEST(Terms, ASumFactorsCoefficientMovesToTheProduct) {
  TermTable t;
  const TermId x = t.var("x"), a = t.var("a"), b = t.var("b");
  const Rational s(65536);
  // x * (s*a + s*b)  ==  s * (x * (a + b))
  const TermId inside = t.mul(x, t.add(t.scale(a, s), t.scale(b, s)));
  const TermId outside = t.scale(t.mul(x, t.add(a, b)), s);
  EXPECT_EQ(inside, outside);
  // A loss scale removed by a different factor is another term.
  EXPECT_NE(t.scale(inside, Rational(1, 32768)), t.mul(x, t.add(a, b)));
  EXPECT_EQ(t.scale(inside, Rational(1, 65536)), t.mul(x, t.add(a, b)));
}

TEST(Terms, SignsAndReciprocalsOfSums) {
  TermTable t;
  const TermId a = t.var("a"), b = t.var("b"), x = t.var("x");
  const TermId neg = t.scale(t.add(a, t.scale(b, Rational(-1))), Rational(-1));  // -(a - b)
  const TermId bma = t.add(b, t.scale(a, Rational(-1)));                          // b - a
  EXPECT_EQ(t.mul(x, neg), t.mul(x, bma));
  // 1/(2a + 2b) == (1/2) * 1/(a + b), and (2a+2b)^2 == 4 (a+b)^2
  EXPECT_EQ(t.recip(t.add(t.scale(a, Rational(2)), t.scale(b, Rational(2)))),
            t.scale(t.recip(t.add(a, b)), Rational(1, 2)));
  EXPECT_EQ(t.power(t.add(t.scale(a, Rational(2)), t.scale(b, Rational(2))), 2),
            t.scale(t.power(t.add(a, b), 2), Rational(4)));
  // (a + 2) * x with the constant kept in the factor: 2x * (a/2 + 1)
  EXPECT_EQ(t.mul(x, t.add(a, t.constant(Rational(2)))),
            t.scale(t.mul(x, t.add(t.scale(a, Rational(1, 2)), t.constant(Rational(1)))), Rational(2)));
  // Not equal where the sums differ.
  EXPECT_NE(t.mul(x, t.add(a, b)), t.mul(x, t.add(a, t.scale(b, Rational(2)))));
}

// Top-k of one positive scale and one shift of every entry selects what
// top-k of the entries does; a negative scale does not.
TEST(Terms, TopKOfAPositiveAffineMapOfTheRowIsTopKOfTheRow) {
  TermTable t;
  const std::vector<TermId> row{t.var("a"), t.var("b"), t.var("c")};
  std::vector<TermId> scaled, negated, mixed;
  for (TermId x : row) {
    scaled.push_back(t.add(t.scale(x, Rational(5, 2)), t.constant(Rational(1))));
    negated.push_back(t.scale(x, Rational(-2)));
  }
  mixed = scaled;
  mixed[2] = t.scale(row[2], Rational(3));
  EXPECT_EQ(t.topk_mask(scaled, 2), t.topk_mask(row, 2));
  EXPECT_NE(t.topk_mask(negated, 2), t.topk_mask(row, 2));
  EXPECT_NE(t.topk_mask(mixed, 2), t.topk_mask(row, 2));
}

// DeepSeek's sign of a balance offset written as top-1 of [0, v]: the spec's
// v = mean(load) - load and a plan's E*v = sum(load) - E*load select alike
// (one positive scale of the whole row, its 0 entry included); -v does not.
TEST(Terms, TopKOfARowWithAZeroEntryScaledByAPositiveConstant) {
  TermTable t;
  const TermId a = t.var("a"), b = t.var("b"), zero = t.constant(Rational(0));
  const TermId v = t.add(t.scale(t.add(a, b), Rational(1, 2)), t.scale(a, Rational(-1)));  // mean - a
  const TermId ev = t.add(t.add(a, b), t.scale(a, Rational(-2)));                           // sum - 2a
  EXPECT_EQ(t.topk_mask({zero, ev}, 1), t.topk_mask({zero, v}, 1));
  EXPECT_NE(t.topk_mask({zero, t.scale(ev, Rational(-1))}, 1), t.topk_mask({zero, v}, 1));
}

// A top-k mask selects exactly k entries of its row: the whole row, with one
// weight, sums to that weight times k (a mean load T*K/E); a row with an
// entry missing, or with another weight on one entry, does not fold.
TEST(Terms, AWholeTopKRowSumsToK) {
  TermTable t;
  const std::vector<TermId> row{t.var("a"), t.var("b"), t.var("c")};
  const std::vector<TermId> m = t.topk_mask(row, 2);
  const TermId third = t.constant(Rational(1, 3));
  EXPECT_EQ(t.sum({t.mul(third, m[0]), t.mul(third, m[1]), t.mul(third, m[2])}), t.constant(Rational(2, 3)));
  EXPECT_NE(t.sum({m[0], m[1]}), t.constant(Rational(2)));
  const TermId uneven = t.sum({m[0], m[1], t.scale(m[2], Rational(2))});
  EXPECT_NE(uneven, t.constant(Rational(2)));
  EXPECT_EQ(t.sum({uneven, t.scale(m[2], Rational(-1))}), t.constant(Rational(2)));
}

// b^k = b for a 0/1 value (a mask, its complement, an indicator): a dropout
// mask applied twice in a recomputed backward; not for a real variable.
// A cast to i64 truncates: an integer-valued term (a constant, an id, a sum
// of ids with integer coefficients) is its own truncation; a real variable or
// a fraction is not, so an activation sent through i64 and back differs.
TEST(Terms, TruncationKeepsIntegersOnly) {
  TermTable t;
  const TermId x = t.var("x"), id = t.int_var("id", 0, 7), m = t.bool_var("m");
  const auto trunc = [&](TermId a) { return t.apply(parity::ir::Fn::trunc, a); };
  EXPECT_EQ(trunc(t.constant(Rational(5))), t.constant(Rational(5)));
  EXPECT_EQ(trunc(t.constant(Rational(-7, 2))), t.constant(Rational(-3)));
  EXPECT_EQ(trunc(id), id);
  const TermId lin = t.add(t.scale(id, Rational(2)), t.add(m, t.constant(Rational(1))));
  EXPECT_EQ(trunc(lin), lin);
  EXPECT_EQ(trunc(trunc(x)), trunc(x));
  EXPECT_NE(trunc(x), x);
  EXPECT_NE(trunc(t.scale(id, Rational(1, 2))), t.scale(id, Rational(1, 2)));
}

TEST(Terms, PowersOfAMaskAreTheMask) {
  TermTable t;
  const TermId m = t.bool_var("m"), x = t.var("x");
  EXPECT_EQ(t.mul(t.mul(x, m), m), t.mul(x, m));
  const TermId not_m = t.add(t.constant(Rational(1)), t.scale(m, Rational(-1)));
  EXPECT_EQ(t.power(not_m, 3), not_m);
  EXPECT_NE(t.mul(x, x), x);
  // A division by the mask is kept: 1/m is undefined where m is 0.
  EXPECT_NE(t.mul(x, t.recip(m)), t.mul(x, m));
}

}  // namespace

// y * y^-1 = 1 is recorded when y can be 0 (a count: a sum of masks), so the
// proof that used it is run where masks are mostly off; a denominator that
// cannot be 0 (a sum of exponentials, a sum with a constant) is not.
TEST(Terms, CancelledCountsThatCanBeZeroAreRecorded) {
  TermTable t;
  const TermId x = t.var("x"), a = t.var("a"), b = t.var("b");
  const TermId m0 = t.bool_var("m[0]"), m1 = t.bool_var("m[1]");
  const TermId count = t.add(m0, m1);
  const TermId softmax_den = t.add(t.apply(parity::ir::Fn::exp, a), t.apply(parity::ir::Fn::exp, b));
  const TermId guarded = t.add(count, t.constant(Rational(1)));
  EXPECT_EQ(t.mul(t.mul(x, t.recip(softmax_den)), softmax_den), x);
  EXPECT_EQ(t.mul(t.mul(x, t.recip(guarded)), guarded), x);
  EXPECT_TRUE(t.zero_cancelled().empty());
  // (x / count) * count
  EXPECT_EQ(t.mul(t.mul(x, t.recip(count)), count), x);
  ASSERT_EQ(t.zero_cancelled().size(), 1u);
  // x / count^2 * count keeps a division by count: nothing more is lost.
  t.mul(t.mul(x, t.power(count, -2)), count);
  EXPECT_EQ(t.zero_cancelled().size(), 1u);
  // One mask alone can be 0 too.
  EXPECT_EQ(t.mul(t.mul(x, t.recip(m0)), m0), x);
  EXPECT_EQ(t.zero_cancelled().size(), 2u);
}

// A norm written pow(s, 0.5), s * rsqrt(s) or sqrt(s)^2 is one term with
// sqrt(s) or s; sqrt(x)^2 stays apart from x where x may be negative (there
// sqrt(x) is undefined and x is not).
TEST(Terms, SquareRootsFoldWhereTheirArgumentIsNonnegative) {
  using parity::ir::Fn;
  TermTable t;
  const TermId g = t.var("g"), h = t.var("h"), x = t.var("x");
  const TermId s = t.add(t.power(g, 2), t.power(h, 2));  // a sum of squares
  const TermId root = t.apply(Fn::sqrt, s);
  EXPECT_EQ(t.powc(s, Rational(1, 2)), root);
  EXPECT_EQ(t.mul(s, t.apply(Fn::rsqrt, s)), root);
  EXPECT_EQ(t.apply(Fn::rsqrt, s), t.recip(root));
  EXPECT_EQ(t.power(root, 2), s);
  EXPECT_EQ(t.powc(s, Rational(3, 2)), t.mul(s, root));
  // Per-parameter norms squared and summed: the global norm.
  EXPECT_EQ(t.add(t.power(t.apply(Fn::sqrt, t.power(g, 2)), 2), t.power(t.apply(Fn::sqrt, t.power(h, 2)), 2)), s);
  // x may be negative: sqrt(x)^2 is not x, but x / sqrt(x) is sqrt(x).
  EXPECT_NE(t.power(t.apply(Fn::sqrt, x), 2), x);
  EXPECT_EQ(t.mul(x, t.apply(Fn::rsqrt, x)), t.apply(Fn::sqrt, x));
}

namespace {

// A router's sigmoid backward written s*(1-s) in the spec and s - s^2 in the
// plan, times a long gradient sum: expanding the pair distributes the sum
// and runs past the budget; compared by parts, the shared sum cancels and
// only s*(1-s) against s - s^2 is expanded.
TEST(Terms, EqualByPartsExpandsOnlyThePartsThatDiffer) {
  TermTable t;
  const TermId s = t.var("s");
  std::vector<TermId> parts;
  for (int i = 0; i < 400; ++i) parts.push_back(t.mul(t.var("g" + std::to_string(i)), t.var("w" + std::to_string(i))));
  const TermId g = t.sum(parts);
  const TermId one_minus_s = t.add(t.constant(Rational(1)), t.scale(s, Rational(-1)));
  const TermId spec = t.mul(t.mul(s, one_minus_s), g);
  const TermId plan = t.mul(t.add(s, t.scale(t.mul(s, s), Rational(-1))), g);
  ASSERT_NE(spec, plan);
  EXPECT_THROW(t.expand(spec, 100), BudgetExceeded);
  EXPECT_TRUE(t.equal_by_parts(spec, plan, 100));
  // Inside a sum of such terms too (the router weight's gradient sums them over tokens).
  const TermId x = t.var("x"), y = t.var("y");
  EXPECT_TRUE(t.equal_by_parts(t.add(t.mul(x, spec), y), t.add(y, t.mul(plan, x)), 100));
  // A sign slip is not equal.
  const TermId wrong = t.mul(t.add(s, t.mul(s, s)), g);
  EXPECT_FALSE(t.equal_by_parts(spec, wrong, 100));
  EXPECT_FALSE(t.equal_by_parts(t.add(t.mul(x, spec), y), t.add(y, t.mul(wrong, x)), 100));
}

// Megatron's per-token loss: each token's gradient term divided by the token
// count N in the spec, the summed gradient divided by N once in the plan.
// Moving 1/N out of the sum is distributivity over a long sum: by parts,
// the plan's side is distributed one level and the terms cancel.
TEST(Terms, EqualByPartsMovesAFactorOutOfASum) {
  TermTable t;
  std::vector<TermId> masks, spec_terms, plan_terms;
  for (int i = 0; i < 300; ++i) masks.push_back(t.bool_var("m" + std::to_string(i)));
  const TermId inv_n = t.recip(t.sum(masks));
  for (int i = 0; i < 300; ++i) {
    const TermId p = t.var("p" + std::to_string(i)), y = t.var("y" + std::to_string(i));
    const TermId g = t.mul(t.mul(t.var("x" + std::to_string(i)), t.add(p, t.scale(y, Rational(-1)))), masks[i]);
    spec_terms.push_back(t.mul(g, inv_n));
    plan_terms.push_back(g);
  }
  const TermId wd = t.var("wd");  // a term beside the sum (weight decay)
  const TermId spec = t.add(t.sum(spec_terms), wd);
  const TermId plan = t.add(t.mul(t.sum(plan_terms), inv_n), wd);
  ASSERT_NE(spec, plan);
  EXPECT_THROW(t.expand(plan, 100), BudgetExceeded);
  EXPECT_TRUE(t.equal_by_parts(spec, plan, 100));
  EXPECT_TRUE(t.equal_by_parts(t.sum(spec_terms), t.mul(t.sum(plan_terms), inv_n), 100));
  // One token's term left out of the plan's sum is not equal.
  std::vector<TermId> short_terms(plan_terms.begin() + 1, plan_terms.end());
  EXPECT_FALSE(t.equal_by_parts(t.sum(spec_terms), t.mul(t.sum(short_terms), inv_n), 100));
}

// torch.clamp(num_tokens, min=1) before the division the spec makes by the
// count itself: the same wherever the count is not 0, which is recorded.
TEST(Terms, AClampedCountIsTheCountWhereItIsNotZero) {
  TermTable t;
  std::vector<TermId> masks;
  for (int i = 0; i < 4; ++i) masks.push_back(t.bool_var("m" + std::to_string(i)));
  const TermId n = t.sum(masks);
  EXPECT_EQ(t.max(n, t.constant(Rational(1))), n);
  ASSERT_EQ(t.zero_cancelled().size(), 1u);
  EXPECT_EQ(t.zero_cancelled()[0], n);
  // Not a count, or a clamp that changes a count of 1: kept.
  const TermId x = t.var("x");
  EXPECT_NE(t.max(x, t.constant(Rational(1))), x);
  EXPECT_NE(t.max(n, t.constant(Rational(2))), n);
  EXPECT_NE(t.max(t.add(n, t.constant(Rational(-1))), t.constant(Rational(1))), t.add(n, t.constant(Rational(-1))));
  // Tokens not ignored, 4 - sum[label = -100], count too.
  const TermId id = t.int_var("label", 0, 8, {-100});
  const TermId kept = t.add(t.constant(Rational(4)), t.scale(t.ind(id, -100), Rational(-1)));
  EXPECT_EQ(t.max(kept, t.constant(Rational(1))), kept);
}

// A product of two sums reduced over two axes, each sum over one: the ranks'
// terms P_c * S_d add up to (sum P)(sum S), which by parts groups them to.
TEST(Terms, EqualByPartsGroupsAProductOfPartialSums) {
  TermTable t;
  auto partial = [&](const std::string& name, int k) {
    std::vector<TermId> v;
    for (int i = 0; i < 40; ++i) v.push_back(t.var(name + std::to_string(k) + "_" + std::to_string(i)));
    return t.sum(v);
  };
  std::vector<TermId> ps, ss, cross;
  for (int k = 0; k < 3; ++k) ps.push_back(partial("p", k)), ss.push_back(partial("s", k));
  for (TermId p : ps)
    for (TermId s : ss) cross.push_back(t.mul(p, s));
  const TermId spec = t.mul(t.sum(ps), t.sum(ss));
  EXPECT_TRUE(t.equal_by_parts(spec, t.sum(cross), 100));
  // Each P paired with its own S only is not the product.
  std::vector<TermId> diag;
  for (int k = 0; k < 3; ++k) diag.push_back(t.scale(t.mul(ps[k], ss[k]), Rational(3)));
  EXPECT_FALSE(t.equal_by_parts(spec, t.sum(diag), 100));
}

// Top-k of softmax probabilities selects what top-k of the logits does: the
// row max is one shift of every entry and the denominator one positive
// factor. A factor that can be negative or 0, or a shift one entry lacks,
// is not taken off.
TEST(Terms, TopKOfSoftmaxIsTopKOfTheLogits) {
  TermTable t;
  const std::vector<TermId> row{t.var("a"), t.var("b"), t.var("c")};
  const TermId m = t.max(t.max(row[0], row[1]), row[2]);
  std::vector<TermId> exps, probs, by_var, shifted_but_one;
  for (TermId x : row) exps.push_back(t.apply(parity::ir::Fn::exp, t.add(x, t.scale(m, Rational(-1)))));
  const TermId den = t.sum(exps);
  const TermId v = t.var("v");
  for (size_t i = 0; i < row.size(); ++i) {
    probs.push_back(t.mul(exps[i], t.recip(den)));
    by_var.push_back(t.mul(row[i], v));
    shifted_but_one.push_back(i == 2 ? row[i] : t.add(row[i], v));
  }
  EXPECT_EQ(t.topk_mask(probs, 2), t.topk_mask(row, 2));
  EXPECT_NE(t.topk_mask(by_var, 2), t.topk_mask(row, 2));
  EXPECT_NE(t.topk_mask(shifted_but_one, 2), t.topk_mask(row, 2));
}

}  // namespace


namespace {

// The exp-shift normal form (verify/term_exp.cpp): a softmax and a
// log-sum-exp do not depend on the shift they subtract, and an online
// softmax that merges two partial results by exp(m_i - m) is the softmax.
TEST(Terms, SoftmaxAndLogSumExpDoNotDependOnTheirShift) {
  TermTable t;
  std::vector<TermId> x;
  for (int j = 0; j < 4; ++j) x.push_back(t.var("x" + std::to_string(j)));
  const TermId v0 = t.var("v0"), v1 = t.var("v1"), v2 = t.var("v2"), v3 = t.var("v3");
  const std::vector<TermId> v{v0, v1, v2, v3};
  auto ex = [&](TermId a, TermId shift) { return t.apply(parity::ir::Fn::exp, t.add(a, t.scale(shift, Rational(-1)))); };
  auto sum_exp = [&](int lo, int hi, TermId shift) {
    std::vector<TermId> parts;
    for (int j = lo; j < hi; ++j) parts.push_back(ex(x[j], shift));
    return t.sum(parts);
  };
  const TermId m01 = t.max(x[0], x[1]), m23 = t.max(x[2], x[3]), m = t.max(m01, m23);
  // log-sum-exp shifted by the row max against one shifted by the sum of two partial maxes.
  const TermId lse_max = t.add(m, t.apply(parity::ir::Fn::log, sum_exp(0, 4, m)));
  const TermId s = t.add(m01, m23);
  const TermId lse_sum = t.add(s, t.apply(parity::ir::Fn::log, sum_exp(0, 4, s)));
  EXPECT_NE(lse_max, lse_sum);
  EXPECT_EQ(t.exp_normal(lse_max), t.exp_normal(lse_sum));
  EXPECT_TRUE(t.equal_by_parts(lse_max, lse_sum, 1000));
  // Added back with another shift than the one subtracted: not equal.
  const TermId lse_bad = t.add(m01, t.apply(parity::ir::Fn::log, sum_exp(0, 4, s)));
  EXPECT_NE(t.exp_normal(lse_max), t.exp_normal(lse_bad));
  EXPECT_FALSE(t.equal_by_parts(lse_max, lse_bad, 1000));
  // Online softmax: each half's output o_i = sum_j exp(x_j - m_i) v_j / l_i, merged as
  // (exp(m01 - m) l_0 o_0 + exp(m23 - m) l_1 o_1) / (exp(m01 - m) l_0 + exp(m23 - m) l_1).
  auto half = [&](int lo, int hi, TermId mi, TermId& l) {
    std::vector<TermId> parts;
    for (int j = lo; j < hi; ++j) parts.push_back(t.mul(ex(x[j], mi), v[j]));
    l = sum_exp(lo, hi, mi);
    return t.mul(t.sum(parts), t.recip(l));
  };
  TermId l0, l1;
  const TermId o0 = half(0, 2, m01, l0), o1 = half(2, 4, m23, l1);
  const TermId w0 = t.apply(parity::ir::Fn::exp, t.add(m01, t.scale(m, Rational(-1))));
  const TermId w1 = t.apply(parity::ir::Fn::exp, t.add(m23, t.scale(m, Rational(-1))));
  const TermId merged = t.mul(t.add(t.mul(t.mul(w0, l0), o0), t.mul(t.mul(w1, l1), o1)),
                              t.recip(t.add(t.mul(w0, l0), t.mul(w1, l1))));
  std::vector<TermId> spec_parts;
  const TermId den = sum_exp(0, 4, m);
  for (int j = 0; j < 4; ++j) spec_parts.push_back(t.mul(t.mul(ex(x[j], m), t.recip(den)), v[j]));
  const TermId spec = t.sum(spec_parts);
  EXPECT_TRUE(t.equal_by_parts(spec, merged, 1000));
  // A merge that forgets one half's rescaling is not the softmax.
  const TermId unscaled = t.mul(t.add(t.mul(l0, o0), t.mul(t.mul(w1, l1), o1)),
                                t.recip(t.add(t.mul(w0, l0), t.mul(w1, l1))));
  EXPECT_FALSE(t.equal_by_parts(spec, unscaled, 1000));
}

}  // namespace

namespace {

// sqrt(q^2 x) = q sqrt(x): a norm of loss-scaled gradients divided by the
// scale is the norm of the gradients; a content that is no square stays.
TEST(Terms, ASquareContentLeavesASquareRoot) {
  TermTable t;
  const TermId a = t.var("a"), b = t.var("b");
  const TermId s = t.add(t.power(a, 2), t.power(b, 2));
  const auto sqrt = [&](TermId x) { return t.apply(parity::ir::Fn::sqrt, x); };
  EXPECT_EQ(t.scale(sqrt(t.scale(s, Rational(1024 * 1024))), Rational(1, 1024)), sqrt(s));
  EXPECT_EQ(sqrt(t.scale(s, Rational(1, 4))), t.scale(sqrt(s), Rational(1, 2)));
  // A sum with a constant (a variance + eps) by the square part of its
  // first coefficient: sqrt(9 a^2 + 18) = 3 sqrt(a^2 + 2), rsqrt(4 s) = rsqrt(s) / 2.
  EXPECT_EQ(sqrt(t.add(t.scale(t.power(a, 2), Rational(9)), t.constant(Rational(18)))),
            t.scale(sqrt(t.add(t.power(a, 2), t.constant(Rational(2)))), Rational(3)));
  EXPECT_NE(sqrt(t.add(t.scale(t.power(a, 2), Rational(8)), t.constant(Rational(16)))),
            t.scale(sqrt(t.add(t.power(a, 2), t.constant(Rational(2)))), Rational(8)));
  // sqrt of a rational square is its root; of any other constant it stays.
  EXPECT_EQ(sqrt(t.constant(Rational(9, 4))), t.constant(Rational(3, 2)));
  Rational r;
  EXPECT_FALSE(t.is_const(sqrt(t.constant(Rational(2))), &r));
  EXPECT_NE(sqrt(t.scale(s, Rational(2))), t.scale(sqrt(s), Rational(2)));
  EXPECT_NE(sqrt(t.scale(s, Rational(4))), t.scale(sqrt(s), Rational(4)));
}

}  // namespace

namespace {

// A padding mask times "not an end-of-document token" is a mask: a count of
// such products can be 0, and a division by it cancelled is recorded.
TEST(Terms, ACountOfMaskedIndicatorsCanBeZero) {
  TermTable t;
  const TermId x = t.var("x");
  const TermId tok0 = t.int_var("tok[0]", 0, 8), tok1 = t.int_var("tok[1]", 0, 8);
  const TermId pad0 = t.bool_var("pad[0]"), pad1 = t.bool_var("pad[1]");
  const TermId one = t.constant(Rational(1));
  auto keep = [&](TermId pad, TermId tok) { return t.mul(pad, t.add(one, t.scale(t.ind(tok, 7), Rational(-1)))); };
  const TermId count = t.add(keep(pad0, tok0), keep(pad1, tok1));
  EXPECT_EQ(t.mul(t.mul(x, t.recip(count)), count), x);
  EXPECT_EQ(t.zero_cancelled().size(), 1u);
}

// 1/max(1, a) is min(1, 1/a) where a > 0 (a norm plus eps); not where a
// may be negative.
TEST(Terms, TheReciprocalOfAMaxOfPositiveTermsIsAMin) {
  TermTable t;
  const TermId s = t.var("s"), x = t.var("x");
  const TermId one = t.constant(Rational(1));
  const TermId norm_eps = t.add(t.apply(parity::ir::Fn::sqrt, t.power(s, 2)), t.constant(Rational(1, 1000000)));
  EXPECT_EQ(t.recip(t.max(one, norm_eps)), t.min(one, t.recip(norm_eps)));
  EXPECT_EQ(t.mul(x, t.recip(t.max(one, norm_eps))), t.mul(x, t.min(one, t.recip(norm_eps))));
  EXPECT_NE(t.recip(t.max(one, x)), t.min(one, t.recip(x)));
}

// exp(g + log(l)) = exp(g) * l for l > 0 (TransformerEngine's lse merge);
// not for an l that may be 0 or negative.
TEST(Terms, ExpOfALogOfAPositiveTermIsTheTerm) {
  TermTable t;
  const TermId a = t.var("a"), b = t.var("b"), g = t.var("g"), y = t.var("y");
  const auto exp = [&](TermId v) { return t.apply(parity::ir::Fn::exp, v); };
  const auto log = [&](TermId v) { return t.apply(parity::ir::Fn::log, v); };
  const TermId l = t.add(exp(a), exp(b));
  EXPECT_EQ(t.exp_normal(exp(t.add(g, log(l)))), t.exp_normal(t.mul(exp(g), l)));
  EXPECT_NE(t.exp_normal(exp(t.add(g, log(y)))), t.exp_normal(t.mul(exp(g), y)));
}

}  // namespace

namespace {

// A row sum of exps masked by document ids, sum_j exp(s_j) [doc_i = doc_j],
// is 0 for a query whose document has no key in the block: a division by it
// cancelled is recorded. A row sum with an unmasked term (the diagonal key)
// is positive and is not.
TEST(Terms, AMaskedRowSumOfExpsCanBeZero) {
  TermTable t;
  const TermId x = t.var("x"), s0 = t.var("s0"), s1 = t.var("s1");
  const TermId d = t.int_var("doc[0]", 0, 4), d0 = t.int_var("doc[1]", 0, 4), d1 = t.int_var("doc[2]", 0, 4);
  const auto exp = [&](TermId v) { return t.apply(parity::ir::Fn::exp, v); };
  auto same_doc = [&](TermId a, TermId b) {
    std::vector<TermId> parts;
    for (int k = 0; k < 4; ++k) parts.push_back(t.mul(t.ind(a, k), t.ind(b, k)));
    return t.sum(parts);
  };
  const TermId block = t.add(t.mul(exp(s0), same_doc(d, d0)), t.mul(exp(s1), same_doc(d, d1)));
  EXPECT_EQ(t.mul(t.mul(x, t.recip(block)), block), x);
  EXPECT_EQ(t.zero_cancelled().size(), 1u);
  const TermId with_diagonal = t.add(exp(x), block);
  EXPECT_EQ(t.mul(t.mul(x, t.recip(with_diagonal)), with_diagonal), x);
  EXPECT_EQ(t.zero_cancelled().size(), 1u);
}

// log(exp(a) / (exp(a) + exp(b))) = a - log(exp(a) + exp(b)): a log-softmax
// written log(softmax(x)) (a router z-loss) is the log-sum-exp's complement.
// And a sum whose every term has the factor 1/Z is 1/Z times a sum: a
// softmax renormalized by a mask, p m / sum(p m), has its 1/Z cancelled.
TEST(Terms, LogsOfPositiveProductsSplitAndSharedFactorsComeOut) {
  TermTable t;
  const TermId a = t.var("a"), b = t.var("b"), m0 = t.bool_var("m0"), m1 = t.bool_var("m1");
  const auto exp = [&](TermId v) { return t.apply(parity::ir::Fn::exp, v); };
  const auto log = [&](TermId v) { return t.apply(parity::ir::Fn::log, v); };
  const TermId z = t.add(exp(a), exp(b));
  const TermId lse = log(z);
  const TermId via_softmax = t.add(a, t.scale(log(t.mul(exp(a), t.recip(z))), Rational(-1)));
  EXPECT_NE(via_softmax, lse);
  EXPECT_EQ(t.exp_normal(via_softmax), t.exp_normal(lse));
  // Not for a factor that may be negative: log(a / z) stays.
  EXPECT_NE(t.exp_normal(log(t.mul(a, t.recip(z)))), t.exp_normal(t.add(log(a), t.scale(lse, Rational(-1)))));
  const TermId p0 = t.mul(exp(a), t.recip(z)), p1 = t.mul(exp(b), t.recip(z));
  const TermId renorm = t.mul(t.mul(p0, m0), t.recip(t.add(t.mul(p0, m0), t.mul(p1, m1))));
  const TermId direct = t.mul(t.mul(exp(a), m0), t.recip(t.add(t.mul(exp(a), m0), t.mul(exp(b), m1))));
  EXPECT_NE(renorm, direct);
  EXPECT_EQ(t.exp_normal(renorm), t.exp_normal(direct));
}

}  // namespace

namespace {

// sum_v [label = v] (l_v - m) = sum_v [label = v] l_v - m where the label
// takes exactly one value of its range: a target picked from shifted logits
// (Megatron's vocab-parallel loss) against one picked from the logits. Not
// where the label may also be an ignore_index outside the range.
TEST(Terms, IndicatorsOverAnIdsWholeRangeSumToOne) {
  TermTable t;
  const TermId m = t.var("m");
  std::vector<TermId> l;
  for (int v = 0; v < 3; ++v) l.push_back(t.var("l" + std::to_string(v)));
  auto picks = [&](TermId label, bool shifted) {
    std::vector<TermId> parts;
    for (int v = 0; v < 3; ++v)
      parts.push_back(t.mul(t.ind(label, v), shifted ? t.add(l[v], t.scale(m, Rational(-1))) : l[v]));
    return t.sum(parts);
  };
  const TermId label = t.int_var("label", 0, 3);
  const TermId shifted = picks(label, true), plain = t.add(picks(label, false), t.scale(m, Rational(-1)));
  EXPECT_NE(shifted, plain);
  EXPECT_EQ(t.exp_normal(shifted), t.exp_normal(plain));
  const TermId ignorable = t.int_var("label2", 0, 3, {-100});
  EXPECT_NE(t.exp_normal(picks(ignorable, true)),
            t.exp_normal(t.add(picks(ignorable, false), t.scale(m, Rational(-1)))));
}

}  // namespace
