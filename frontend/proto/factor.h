// Placements with a factor (`factor: "dp*cp"`, `factor: "1/dp"`): the plan
// value is that many times the spec region (a backward pass seeded with a
// loss that each rank did not divide by the data-parallel size). Lowered to
// plain ops and a plain placement, so every later pass sees nothing new.
#pragma once
#include <string>

#include "ir/dim_expr.h"
#include "ir/plan.h"

namespace parity::frontend {

// Placement `index` of `p` says its value v is k times (or, `inverse`, 1/k
// times) its spec region. Its program gets `q = v / k` (`v * k`) right after
// v's definition, placed instead of v, and `b = q * k` (`q / k`), which the
// later uses of v read: the verifier proves q against the spec, a stage cut
// at q hands those uses k times the spec's values, and b equals v over the
// reals. Throws std::invalid_argument naming the reason (a value defined
// inside a loop body, an unknown program or value).
void lower_factor(ir::Plan& p, size_t index, const ir::DimExpr& k, bool inverse);

}  // namespace parity::frontend
