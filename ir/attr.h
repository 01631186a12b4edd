// Op attributes. Integers are dim expressions (they may name dims or, in plan
// programs, the rank's coordinates such as `$tp`).
#pragma once
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ir/dim_expr.h"

namespace parity::ir {

using Groups = std::vector<std::vector<int64_t>>;          // explicit rank groups
using Coords = std::map<std::string, DimExpr>;             // axis -> coordinate
using Strings = std::vector<std::string>;                  // e.g. mesh axes
using Dims = std::vector<DimExpr>;

using Attr = std::variant<double, std::string, DimExpr, Dims, Strings, Groups, Coords>;

enum class AttrKind { Float, String, Int, Ints, Strings, Groups, Coords };
AttrKind attr_kind(const Attr& a);
const char* attr_kind_name(AttrKind k);
std::string attr_str(const Attr& a);

using AttrMap = std::map<std::string, Attr>;

}  // namespace parity::ir
