// A top-k that leaves some entries out as given must leave some out reduced:
// with E experts lowered to k, every expert is selected, and a bug in the
// selection alone (top-k of the negated scores, a bias added in the wrong
// place) has nothing to show (docs/soundness.md, "Selections keep a choice").
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/plan.h"
#include "ir/validate.h"

namespace parity::reduce {

struct SelectionSite {
  ir::DimExpr extent;  // the extent of the dim selected along
  ir::DimExpr k;       // how many are selected
  std::string where;
};

// Every `topk_mask` of the spec and of each program whose extent is larger
// than its k as given. Types are read from `spec_types` and `types` (by
// program) where given, else inferred for the graphs that hold a top-k.
std::vector<SelectionSite> selection_sites(
    const ir::Case& c, const ir::Bindings& given, const ir::TypeMap* spec_types = nullptr,
    const std::map<std::string, ir::TypeMap>* types = nullptr);

// Of each program's types, those of its top-k operands: what selection_sites
// reads, kept when the rest is freed.
std::map<std::string, ir::TypeMap> selection_operand_types(
    const ir::Case& c, const std::map<std::string, ir::TypeMap>& types);

// Raises the floor of a lowered size of the first site whose extent is no
// longer larger than its k at `now`; true when it raised one.
bool selection_floors(const std::vector<SelectionSite>& sites, const ir::Bindings& now,
                      const std::map<std::string, std::pair<int64_t, int64_t>>& changed,
                      std::map<std::string, int64_t>& floors,
                      std::map<std::string, std::string>& floor_why);

}  // namespace parity::reduce
