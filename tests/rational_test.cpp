// Exact rationals of any size (verify/rational.h): values past 64 bits are
// GMP rationals with one canonical representation each, so terms that hold
// them hash and compare like any other.
#include "verify/rational.h"

#include <gtest/gtest.h>

#include "verify/term.h"

namespace parity::verify {
namespace {

TEST(Rational, ProductsPast64BitsStayExact) {
  const Rational big = Rational(int64_t{1} << 62) * Rational(int64_t{1} << 62);  // 2^124
  EXPECT_FALSE(big.is_small());
  EXPECT_EQ(big.str(), "21267647932558653966460912964485513216");
  EXPECT_THROW(big.num(), NotSmall);  // not an exponent or a count
  // Cancelled back into 64 bits: the small form again, equal to the literal.
  const Rational back = big * Rational(1, int64_t{1} << 62);
  EXPECT_TRUE(back.is_small());
  EXPECT_EQ(back, Rational(int64_t{1} << 62));
  EXPECT_EQ(big - big, Rational(0));
  EXPECT_TRUE((big - big).is_zero());
}

TEST(Rational, EqualValuesHaveEqualRepresentations) {
  const Rational a = Rational(3, int64_t{1} << 40) * Rational(5, int64_t{1} << 40);   // 15 / 2^80
  const Rational b = Rational(5, int64_t{1} << 50) * Rational(3, int64_t{1} << 30);   // the same
  const Rational c = Rational(15, int64_t{1} << 50) * Rational(1, int64_t{1} << 29);  // twice it
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.key_hi(), b.key_hi());
  EXPECT_EQ(a.key_lo(), b.key_lo());
  EXPECT_FALSE(a == c);
  EXPECT_TRUE(a < c);
  EXPECT_TRUE(-c < a);
  EXPECT_EQ(a.sign(), 1);
  EXPECT_EQ((-a).sign(), -1);
  EXPECT_EQ(a.inverse().str(), "1208925819614629174706176/15");  // 2^80 / 15
  EXPECT_NEAR(a.to_double(), 15.0 / 1208925819614629174706176.0, 1e-40);
}

TEST(Rational, DoublesNoSmallFractionRoundsToAreReadExactly) {
  const Rational eps = Rational::from_double(1e-30);
  EXPECT_FALSE(eps.is_small());
  EXPECT_EQ(eps.to_double(), 1e-30);
  EXPECT_EQ(Rational::from_double(0.1), Rational(1, 10));  // the simplest fraction still wins
  EXPECT_EQ(Rational::parse("10/4"), Rational(5, 2));
  EXPECT_EQ(Rational::parse("1000000000000000000000000000000").inverse(),
            Rational::parse("1/1000000000000000000000000000000"));
}

TEST(Rational, ResiduesAreThoseOfTheExactValue) {
  constexpr uint64_t p = 2305843009213693951ULL;  // 2^61 - 1
  auto mulmod = [](uint64_t a, uint64_t b) {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(a) * b % p);
  };
  const Rational x = Rational(int64_t{1} << 62) * Rational(int64_t{3} << 40);
  const auto [n, d] = x.residue(p);
  const auto [n1, d1] = Rational(int64_t{1} << 62).residue(p);
  const auto [n2, d2] = Rational(int64_t{3} << 40).residue(p);
  EXPECT_EQ(n, mulmod(n1, n2));
  EXPECT_EQ(d, mulmod(d1, d2));
  EXPECT_EQ(Rational(-1).residue(p).first, p - 1);
}

TEST(Rational, TermsWithLargeCoefficientsMeetThemselves) {
  TermTable t;
  const TermId x = t.var("x");
  // x * (1e-30)^2 written two ways: one canonical term.
  const Rational eps = Rational::from_double(1e-30);
  EXPECT_EQ(t.scale(t.scale(x, eps), eps), t.scale(x, eps * eps));
  EXPECT_NE(t.scale(x, eps * eps), t.scale(x, eps));
}

}  // namespace
}  // namespace parity::verify
