#include "ir/attr.h"

#include <fmt/format.h>

namespace parity::ir {

AttrKind attr_kind(const Attr& a) { return static_cast<AttrKind>(a.index()); }

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::Int: return "int";
    case AttrKind::Ints: return "ints";
    case AttrKind::Strings: return "strings";
    case AttrKind::Groups: return "groups";
    case AttrKind::Coords: return "coords";
  }
  return "?";
}

std::string attr_str(const Attr& a) {
  struct V {
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
    std::string operator()(const DimExpr& e) const { return e.str(); }
    std::string operator()(const Dims& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i].str();
      return s + "]";
    }
    std::string operator()(const Strings& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
      return s + "]";
    }
    std::string operator()(const Groups& g) const {
      std::string s = "[";
      for (size_t i = 0; i < g.size(); ++i) {
        s += i ? ",[" : "[";
        for (size_t j = 0; j < g[i].size(); ++j) s += (j ? "," : "") + std::to_string(g[i][j]);
        s += "]";
      }
      return s + "]";
    }
    std::string operator()(const Coords& c) const {
      std::string s = "{";
      bool first = true;
      for (const auto& [k, v] : c) {
        s += (first ? "" : ",") + k + "=" + v.str();
        first = false;
      }
      return s + "}";
    }
  };
  return std::visit(V{}, a);
}

}  // namespace parity::ir
