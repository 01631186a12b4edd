// Visits every dim expression of a case, with where it sits (for the reduction
// report). The description is built only when asked for: the walk runs over
// every op of large plans several times.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/plan.h"
#include "ir/validate.h"

namespace parity::reduce {

struct Where {
  const std::string* scope = nullptr;  // "spec" or "program NAME"
  const ir::Op* op = nullptr;          // the op whose attribute or region holds it
  const std::string* attr = nullptr;   // its attribute name
  const std::string* type = nullptr;   // a declared value whose type holds it
  const ir::Placement* placement = nullptr;
  std::string str() const;
};

using ExprFn = std::function<void(const ir::DimExpr&, const Where& where)>;

void for_each_expr(const ir::Case& c, const ExprFn& f);

// Rewrites every dim expression of the plan in place (selectors are not exprs).
void map_plan_exprs(ir::Plan& p, const std::function<ir::DimExpr(const ir::DimExpr&)>& f);

// Degree of `e` in symbol `s`; Div/Mod with `s` inside count as non-affine (99).
int degree_in(const ir::DimExpr& e, const std::string& s);

// Whether `e` reads a coordinate or loop index (`$tp`, `$mb`).
bool has_coord(const ir::DimExpr& e);

// Every op of a graph and of its regions, in program order.
void walk_ops(const ir::Graph& g, const std::function<void(const ir::Op&)>& f);
void walk_ops_mut(ir::Graph& g, const std::function<void(ir::Op&)>& f);

// For a loop op: adds the dim symbols of its count under its index
// variable (`mb` -> {M}) and says true; false for any other op.
bool note_loop_count(const ir::Op& op, std::map<std::string, std::set<std::string>>& counts);

// A float attribute's literal, also when written as an integer (`factor
// i: "2"` reads as 2.0 wherever `f: 2` would).
std::optional<double> float_literal(const ir::Op& op, const std::string& key, const ir::Attr& a);

// Whether attribute `name` of `op` is declared a float (the registry's kind),
// whatever form its value is written in.
bool float_attr(const ir::Op& op, const std::string& name);

// Sub-expressions of kind Div (to check exact division and shard sizes).
void divisions(const ir::DimExpr& e, std::vector<ir::DimExpr>& out);

// The remainders (`a % b`) and differences (`a - b`: a padding of a buffer
// to a multiple) inside an expression, outermost first.
void remainders(const ir::DimExpr& e, std::vector<ir::DimExpr>& out);

// The dim symbols of the counts of the plan's loops over index `var` (no `$`).
void loop_count_symbols(const ir::Plan& p, const std::string& var, std::set<std::string>& out);

// The sizes a spec output's placed boxes depend on: the symbols of its shape
// (`types`: the spec's value types), of its placements' regions, the axes
// whose coordinates they read and the counts of the loops whose indices they
// read. Keeping all of them keeps the boxes as given.
std::set<std::string> output_box_sizes(const ir::Case& c, const std::string& output, const ir::TypeMap& types);

}  // namespace parity::reduce
