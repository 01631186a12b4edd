// Float literals of a plan that may stand for a power of a size times a
// constant of the spec (Megatron's load-balancing coefficient
// `alpha * E / (k * T^2)` computed in Python and written as one number). The
// reduction pins only literals equal to q, 1/q or 1/sqrt(q) of a size q; these
// other forms are not pinned (that would keep the sizes as given, too large to
// check), so a difference a reduced instance shows may be the literal's,
// not the plan's. verify/check.cpp runs the reduced instance again under
// each reading before it reports such a difference.
#pragma once
#include <vector>

#include "ir/plan.h"
#include "reduce/reduce.h"

namespace parity::reduce {

// The literals of `given`'s programs (`factor` and `value` attributes of ops
// the spec does not share) equal, within 1e-9, to c * q^k for a scaling
// constant or eps of the spec, or 1, a size q that `r` changed (or a product
// of two sizes, one changed) and k in {2, -2, 1, -1}, or sqrt(q) (not q and
// 1/q: those are pinned). Each with its values at `r`'s sizes.
std::vector<Reading> power_readings(const ir::Case& given, const Result& r);

}  // namespace parity::reduce
