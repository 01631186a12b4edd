// Visits every dim expression and every floating-point literal of a case, with
// a short description of where it sits (for the reduction report).
#pragma once
#include <functional>
#include <string>

#include "ir/plan.h"

namespace parity::reduce {

using ExprFn = std::function<void(const ir::DimExpr&, const std::string& where)>;
using FloatFn = std::function<void(double, const std::string& where)>;

void for_each_expr(const ir::Case& c, const ExprFn& f);
void for_each_float(const ir::Case& c, const FloatFn& f);

// Rewrites every dim expression of the plan in place (selectors are not exprs).
void map_plan_exprs(ir::Plan& p, const std::function<ir::DimExpr(const ir::DimExpr&)>& f);

// Degree of `e` in symbol `s`; Div/Mod with `s` inside count as non-affine (99).
int degree_in(const ir::DimExpr& e, const std::string& s);

// Sub-expressions of kind Div (to check exact division and shard sizes).
void divisions(const ir::DimExpr& e, std::vector<ir::DimExpr>& out);

}  // namespace parity::reduce
