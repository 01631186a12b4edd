// Canonical forms of verify/term.h: identities that must hold by form, and
// look-alikes that must not.
#include <gtest/gtest.h>

#include "verify/term.h"

namespace parity::verify {
namespace {

// exp(x_i - m) / sum_j exp(x_j - m), the stable softmax, with m any term.
TermId stable_softmax(TermTable& t, const std::vector<TermId>& x, size_t i, TermId m) {
  std::vector<TermId> e;
  for (TermId v : x) e.push_back(t.apply(ir::Fn::exp, t.add(v, t.scale(m, Rational(-1)))));
  return t.mul(e[i], t.recip(t.sum(e)));
}

TEST(Term, SoftmaxIsShiftInvariantByForm) {
  TermTable t;
  std::vector<TermId> x{t.var("x0"), t.var("x1"), t.var("x2")};
  TermId m = t.max(t.max(x[0], x[1]), x[2]);
  std::vector<TermId> e;
  for (TermId v : x) e.push_back(t.apply(ir::Fn::exp, v));
  for (size_t i = 0; i < x.size(); ++i) {
    TermId naive = t.mul(e[i], t.recip(t.sum(e)));
    EXPECT_EQ(stable_softmax(t, x, i, m), naive) << t.str(stable_softmax(t, x, i, m)) << " vs " << t.str(naive);
    // Another shift (a local max, a constant) gives the same form too.
    EXPECT_EQ(stable_softmax(t, x, i, t.var("c")), naive);
    EXPECT_EQ(stable_softmax(t, x, i, t.constant(Rational(3))), naive);
  }
}

TEST(Term, FactoringExpKeepsDifferentSumsApart) {
  TermTable t;
  TermId x = t.var("x"), y = t.var("y"), z = t.var("z"), m = t.var("m");
  auto ex = [&](TermId a) { return t.apply(ir::Fn::exp, a); };
  auto minus = [&](TermId a, TermId b) { return t.add(a, t.scale(b, Rational(-1))); };
  // exp(x - m) + exp(y - m) is exp(-m) (exp(x) + exp(y)), not exp(-m) (exp(x) + exp(z)).
  TermId a = t.add(ex(minus(x, m)), ex(minus(y, m)));
  EXPECT_EQ(a, t.mul(ex(t.scale(m, Rational(-1))), t.add(ex(x), ex(y))));
  EXPECT_NE(a, t.mul(ex(t.scale(m, Rational(-1))), t.add(ex(x), ex(z))));
  // A sum with a term that carries no exp factor is left alone.
  TermId b = t.add(ex(minus(x, m)), y);
  EXPECT_NE(b, t.mul(ex(t.scale(m, Rational(-1))), t.add(ex(x), t.mul(ex(m), y))));
  // Coefficients survive: 2 exp(x - m) - exp(y - m).
  TermId c = t.sum({t.scale(ex(minus(x, m)), Rational(2)), t.scale(ex(minus(y, m)), Rational(-1))});
  EXPECT_EQ(c, t.mul(ex(t.scale(m, Rational(-1))), t.sum({t.scale(ex(x), Rational(2)), t.scale(ex(y), Rational(-1))})));
  EXPECT_NE(c, t.mul(ex(t.scale(m, Rational(-1))), t.sum({ex(x), t.scale(ex(y), Rational(-1))})));
}

}  // namespace
}  // namespace parity::verify
