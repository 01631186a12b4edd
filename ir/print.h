// Readable listings of specs and plans (`parity inspect`).
#pragma once
#include <string>

#include "ir/plan.h"
#include "ir/validate.h"

namespace parity::ir {

std::string print_graph(const Graph& g, const TypeMap* types, int indent = 2);
std::string print_spec(const Spec& s, const TypeMap* types);
std::string print_plan(const Plan& p, const std::map<std::string, TypeMap>* types);
// One-paragraph summary: sizes, counts, ops used.
std::string summarize_case(const Case& c);

}  // namespace parity::ir
