// Exact rationals for term coefficients, of any size. A value that fits 64
// bits is held inline (the fast path every coefficient of a typical plan
// takes); a larger one is a GMP rational, interned once per value, so a
// Rational stays two words and equal values have equal representations.
#pragma once
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace parity::verify {

// A constant used where a machine integer is needed (an exponent, a count,
// an index) that does not fit one. The check is UNKNOWN there, never wrong.
struct NotSmall : std::runtime_error {
  NotSmall()
      : std::runtime_error(
            "an exact constant used as an exponent, a count or an index is past 64 bits") {}
};

// A constant that is not a real number (inf or NaN: 1/(1 - beta^0) in an
// optimizer at step 0). No term can hold it; the check falls back to running
// the plan numerically, where the plan is not finite.
struct NonFinite : std::domain_error {
  explicit NonFinite(
      const char* what =
          "a constant that is not finite (inf or NaN: a division by zero among constants)")
      : std::domain_error(what) {}
};

class Rational {
 public:
  Rational(int64_t n = 0) : n_(n), d_(1) {}  // NOLINT: integers convert
  Rational(int64_t n, int64_t d) { *this = make(n, d); }

  // The simplest rational that the double rounds to (so 1.0/3 reads as 1/3);
  // a double no small fraction rounds to is read exactly.
  static Rational from_double(double x);
  // From decimal text `N` or `N/D` (any size).
  static Rational parse(const std::string& s);

  bool is_small() const { return d_ != 0; }
  // Numerator and denominator where they fit 64 bits; NotSmall otherwise.
  int64_t num() const {
    if (!d_) throw NotSmall();
    return n_;
  }
  int64_t den() const {
    if (!d_) throw NotSmall();
    return d_;
  }
  bool is_zero() const { return d_ && n_ == 0; }
  bool is_one() const { return n_ == 1 && d_ == 1; }
  bool is_int() const { return d_ == 1 || (!d_ && big_is_int()); }
  int sign() const { return d_ ? (n_ > 0) - (n_ < 0) : big_sign(); }
  double to_double() const {
    return d_ ? static_cast<double>(n_) / static_cast<double>(d_) : big_double();
  }
  std::string str() const;
  // Rounded toward zero.
  Rational trunc() const;
  // Numerator and denominator modulo the prime p (for hashing polynomials).
  std::pair<uint64_t, uint64_t> residue(uint64_t p) const;
  // In extended precision where it fits 64 bits (term_eval.h's long double runs).
  long double to_long_double() const {
    return d_ ? static_cast<long double>(n_) / static_cast<long double>(d_) : big_double();
  }
  // Two words that identify the value (for hashing and equality).
  uint64_t key_hi() const { return static_cast<uint64_t>(n_); }
  uint64_t key_lo() const { return static_cast<uint64_t>(d_); }

  friend Rational operator+(const Rational& a, const Rational& b) {
    if (a.d_ && b.d_) {
      __int128 n = static_cast<__int128>(a.n_) * b.d_ + static_cast<__int128>(b.n_) * a.d_;
      __int128 d = static_cast<__int128>(a.d_) * b.d_;
      return make(n, d);
    }
    return big_add(a, b);
  }
  friend Rational operator-(const Rational& a) {
    return a.d_ ? make(-static_cast<__int128>(a.n_), a.d_) : big_neg(a);
  }
  friend Rational operator-(const Rational& a, const Rational& b) { return a + (-b); }
  friend Rational operator*(const Rational& a, const Rational& b) {
    if (a.d_ && b.d_)
      return make(static_cast<__int128>(a.n_) * b.n_, static_cast<__int128>(a.d_) * b.d_);
    return big_mul(a, b);
  }
  Rational inverse() const {
    if (is_zero()) throw NonFinite("a division by the constant 0");
    return d_ ? make(d_, n_) : big_inverse(*this);
  }
  // Representations are canonical: equal values, equal words.
  friend bool operator==(const Rational& a, const Rational& b) {
    return a.n_ == b.n_ && a.d_ == b.d_;
  }
  friend bool operator<(const Rational& a, const Rational& b) {
    if (a.d_ && b.d_)
      return static_cast<__int128>(a.n_) * b.d_ < static_cast<__int128>(b.n_) * a.d_;
    return big_less(a, b);
  }

 private:
  static __int128 gcd128(__int128 a, __int128 b) {
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
      __int128 t = a % b;
      a = b;
      b = t;
    }
    return a;
  }
  static Rational make(__int128 n, __int128 d) {
    if (d < 0) {
      n = -n;
      d = -d;
    }
    __int128 g = gcd128(n, d);
    if (g > 1) {
      n /= g;
      d /= g;
    }
    if (n > INT64_MAX || n < -INT64_MAX || d > INT64_MAX) return big_from(n, d);
    Rational r;
    r.n_ = static_cast<int64_t>(n);
    r.d_ = static_cast<int64_t>(d);
    if (r.n_ == 0) r.d_ = 1;
    return r;
  }
  // rational.cpp: values past 64 bits, through GMP.
  static Rational big_from(__int128 n, __int128 d);
  static Rational big_add(const Rational& a, const Rational& b);
  static Rational big_neg(const Rational& a);
  static Rational big_mul(const Rational& a, const Rational& b);
  static Rational big_inverse(const Rational& a);
  static bool big_less(const Rational& a, const Rational& b);
  bool big_is_int() const;
  int big_sign() const;
  double big_double() const;
  friend struct BigTable;

  // Small: n_/d_ with d_ > 0, in lowest terms. Big: d_ == 0 and n_ the
  // value's index in the intern table.
  int64_t n_ = 0, d_ = 1;
};

}  // namespace parity::verify
