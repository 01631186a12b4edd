#include "verify/rational.h"

#include <gmpxx.h>

#include <cmath>
#include <deque>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace parity::verify {

// Values past 64 bits, each stored once: a Rational holds its index. The
// table only grows (such values are few: iterated polynomial steps, scale
// factors multiplied through many layers).
struct BigTable {
  std::shared_mutex m;
  std::deque<mpq_class> values;
  std::map<std::string, int64_t> index;  // canonical text -> position

  static BigTable& get() {
    static BigTable t;
    return t;
  }

  static mpz_class z128(__int128 v) {
    const bool neg = v < 0;
    unsigned __int128 u =
        neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
    mpz_class hi(static_cast<unsigned long>(static_cast<uint64_t>(u >> 64)));
    mpz_class lo(static_cast<unsigned long>(static_cast<uint64_t>(u)));
    mpz_class r = (hi << 64) + lo;
    return neg ? mpz_class(-r) : r;
  }

  static mpq_class of(const Rational& r) {
    if (r.d_)
      return mpq_class(mpz_class(static_cast<long>(r.n_)), mpz_class(static_cast<long>(r.d_)));
    BigTable& t = get();
    std::shared_lock lk(t.m);
    return t.values[static_cast<size_t>(r.n_)];
  }

  static Rational from(mpq_class q) {
    q.canonicalize();
    const mpz_class& n = q.get_num();
    const mpz_class& d = q.get_den();
    const mpz_class lim(static_cast<long>(INT64_MAX));
    Rational r;
    if (abs(n) <= lim && d <= lim) {
      r.n_ = n.get_si();
      r.d_ = d.get_si();
      if (r.n_ == 0) r.d_ = 1;
      return r;
    }
    std::string key = q.get_str();
    BigTable& t = get();
    {
      std::shared_lock lk(t.m);
      if (auto it = t.index.find(key); it != t.index.end()) {
        r.n_ = it->second, r.d_ = 0;
        return r;
      }
    }
    std::unique_lock lk(t.m);
    auto [it, fresh] = t.index.emplace(std::move(key), static_cast<int64_t>(t.values.size()));
    if (fresh) t.values.push_back(q);
    r.n_ = it->second, r.d_ = 0;
    return r;
  }
};

Rational Rational::big_from(__int128 n, __int128 d) {
  return BigTable::from(mpq_class(BigTable::z128(n), BigTable::z128(d)));
}
Rational Rational::big_add(const Rational& a, const Rational& b) {
  return BigTable::from(BigTable::of(a) + BigTable::of(b));
}
Rational Rational::big_neg(const Rational& a) { return BigTable::from(-BigTable::of(a)); }
Rational Rational::big_mul(const Rational& a, const Rational& b) {
  return BigTable::from(BigTable::of(a) * BigTable::of(b));
}
Rational Rational::big_inverse(const Rational& a) { return BigTable::from(1 / BigTable::of(a)); }
bool Rational::big_less(const Rational& a, const Rational& b) {
  return BigTable::of(a) < BigTable::of(b);
}
bool Rational::big_is_int() const { return BigTable::of(*this).get_den() == 1; }
int Rational::big_sign() const { return sgn(BigTable::of(*this)); }
double Rational::big_double() const { return BigTable::of(*this).get_d(); }

std::pair<uint64_t, uint64_t> Rational::residue(uint64_t p) const {
  auto mod = [p](int64_t v) {
    const int64_t m = v % static_cast<int64_t>(p);
    return static_cast<uint64_t>(m < 0 ? m + static_cast<int64_t>(p) : m);
  };
  if (d_) return {mod(n_), mod(d_)};
  const mpq_class q = BigTable::of(*this);
  mpz_class n, d;
  mpz_fdiv_r_ui(n.get_mpz_t(), q.get_num_mpz_t(), static_cast<unsigned long>(p));
  mpz_fdiv_r_ui(d.get_mpz_t(), q.get_den_mpz_t(), static_cast<unsigned long>(p));
  return {n.get_ui(), d.get_ui()};
}

std::string Rational::str() const {
  if (!d_) return BigTable::of(*this).get_str();
  return d_ == 1 ? std::to_string(n_) : std::to_string(n_) + "/" + std::to_string(d_);
}

Rational Rational::trunc() const {
  if (d_) return Rational(n_ / d_);
  const mpq_class q = BigTable::of(*this);
  mpz_class t;
  mpz_tdiv_q(t.get_mpz_t(), q.get_num_mpz_t(), q.get_den_mpz_t());
  return BigTable::from(mpq_class(t));
}

Rational Rational::parse(const std::string& s) {
  mpq_class q;
  if (q.set_str(s, 10) != 0) throw std::invalid_argument("not a rational: " + s);
  return BigTable::from(q);
}

Rational Rational::from_double(double x) {
  if (!std::isfinite(x)) throw NonFinite();
  if (x == std::floor(x) && std::fabs(x) < 9e15) return Rational(static_cast<int64_t>(x));
  // Continued fractions: the first convergent that rounds back to x exactly.
  double a = std::fabs(x);
  __int128 h0 = 1, h1 = 0, k0 = 0, k1 = 1;
  double r = a;
  for (int i = 0; i < 64; ++i) {
    double fl = std::floor(r);
    if (fl > 9e18) break;
    __int128 q = static_cast<__int128>(fl);
    __int128 h2 = q * h0 + h1, k2 = q * k0 + k1;
    if (h2 > INT64_MAX || k2 > INT64_MAX) break;
    h1 = h0;
    h0 = h2;
    k1 = k0;
    k0 = k2;
    if (static_cast<double>(h0) / static_cast<double>(k0) == a) {
      Rational q1(static_cast<int64_t>(h0), static_cast<int64_t>(k0));
      return x < 0 ? -q1 : q1;
    }
    double frac = r - fl;
    if (frac == 0) break;
    r = 1.0 / frac;
  }
  // The double's exact binary value.
  return BigTable::from(mpq_class(x));
}

}  // namespace parity::verify
