#include "verify/rational.h"

#include <cmath>

namespace parity::verify {

Rational Rational::from_double(double x) {
  if (!std::isfinite(x)) throw NonFinite();
  if (x == std::floor(x) && std::fabs(x) < 9e15) return Rational(static_cast<int64_t>(x));
  // Continued fractions: the first convergent that rounds back to x exactly.
  double a = std::fabs(x);
  __int128 h0 = 1, h1 = 0, k0 = 0, k1 = 1;
  double r = a;
  for (int i = 0; i < 64; ++i) {
    double fl = std::floor(r);
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
  // Exact binary value as a last resort.
  int e;
  double m = std::frexp(a, &e);
  int64_t mant = static_cast<int64_t>(std::ldexp(m, 53));
  e -= 53;
  if (e < -62 || e > 9) throw Overflow();
  Rational q1 = e >= 0 ? Rational(mant) * Rational(int64_t{1} << std::min(e, 62)) : Rational(mant, int64_t{1} << std::min(-e, 62));
  return x < 0 ? -q1 : q1;
}

}  // namespace parity::verify
