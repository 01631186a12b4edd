// Sums over a mesh axis of values that are the same on every rank along it.
// Such a sum is n copies of one value: a factor that grows with the axis
// size n, which the mesh reduction changes. A plan that is right only
// because of that factor (every rank computes dy*x and sums it over a grid of
// 2 where the spec has dy*x + x*dy) is right reduced and wrong as given, and
// nothing in its text names the size. Those axes are kept.
#pragma once
#include <map>
#include <string>

#include "ir/plan.h"

namespace parity::reduce {

// Adds to `axes` (axis -> why it is kept) every axis that an `allreduce` or
// `reduce_scatter` with reduce `sum` runs over while its operand does not
// vary along it (docs/soundness.md, "Mesh reduction").
void replicated_sum_blockers(const ir::Case& c, std::map<std::string, std::string>& axes);

}  // namespace parity::reduce
