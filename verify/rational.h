// Exact rationals for term coefficients. 64-bit with overflow detection: an
// overflow aborts the obligation as UNKNOWN rather than producing a wrong proof.
#pragma once
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>

namespace parity::verify {

struct Overflow : std::runtime_error {
  Overflow() : std::runtime_error("rational coefficient overflow") {}
};

// A constant that is not a real number (inf or NaN: 1/(1 - beta^0) in an
// optimizer at step 0). No term can hold it; the check falls back to running
// the plan numerically, where the plan is not finite.
struct NonFinite : std::domain_error {
  explicit NonFinite(const char* what = "a constant that is not finite (inf or NaN: a division by zero among constants)")
      : std::domain_error(what) {}
};

class Rational {
 public:
  Rational(int64_t n = 0) : n_(n), d_(1) {}  // NOLINT: integers convert
  Rational(int64_t n, int64_t d) { set(n, d); }

  // The simplest rational that the double rounds to (so 1.0/3 reads as 1/3).
  static Rational from_double(double x);

  int64_t num() const { return n_; }
  int64_t den() const { return d_; }
  bool is_zero() const { return n_ == 0; }
  bool is_one() const { return n_ == 1 && d_ == 1; }
  bool is_int() const { return d_ == 1; }
  double to_double() const { return static_cast<double>(n_) / static_cast<double>(d_); }
  std::string str() const { return d_ == 1 ? std::to_string(n_) : std::to_string(n_) + "/" + std::to_string(d_); }

  friend Rational operator+(const Rational& a, const Rational& b) {
    __int128 n = static_cast<__int128>(a.n_) * b.d_ + static_cast<__int128>(b.n_) * a.d_;
    __int128 d = static_cast<__int128>(a.d_) * b.d_;
    return make(n, d);
  }
  friend Rational operator-(const Rational& a) { return make(-static_cast<__int128>(a.n_), a.d_); }
  friend Rational operator-(const Rational& a, const Rational& b) { return a + (-b); }
  friend Rational operator*(const Rational& a, const Rational& b) {
    return make(static_cast<__int128>(a.n_) * b.n_, static_cast<__int128>(a.d_) * b.d_);
  }
  Rational inverse() const {
    if (n_ == 0) throw NonFinite("a division by the constant 0");
    return make(d_, n_);
  }
  friend bool operator==(const Rational& a, const Rational& b) { return a.n_ == b.n_ && a.d_ == b.d_; }
  friend bool operator<(const Rational& a, const Rational& b) {
    return static_cast<__int128>(a.n_) * b.d_ < static_cast<__int128>(b.n_) * a.d_;
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
    if (n > INT64_MAX || n < -INT64_MAX || d > INT64_MAX) throw Overflow();
    Rational r;
    r.n_ = static_cast<int64_t>(n);
    r.d_ = static_cast<int64_t>(d);
    if (r.n_ == 0) r.d_ = 1;
    return r;
  }
  void set(int64_t n, int64_t d) { *this = make(n, d); }
  int64_t n_ = 0, d_ = 1;
};

}  // namespace parity::verify
