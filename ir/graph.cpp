#include "ir/graph.h"

namespace parity::ir {

const Attr* Op::attr(const std::string& name) const {
  auto it = attrs.find(name);
  return it == attrs.end() ? nullptr : &it->second;
}

std::string Op::label() const {
  std::string s = kind;
  if (results.empty() && !operands.empty()) {  // `send(x)`: name what is sent
    s += "(";
    for (size_t i = 0; i < operands.size(); ++i) s += (i ? "," : "") + operands[i];
    s += ")";
  }
  if (!results.empty()) {
    s += " -> ";
    for (size_t i = 0; i < results.size(); ++i) s += (i ? "," : "") + results[i];
  }
  if (line && !origin.empty())
    s += " (line " + std::to_string(line) + "; " + origin + ")";
  else if (line)
    s += " (line " + std::to_string(line) + ")";
  else if (!origin.empty())
    s += " (" + origin + ")";
  return s;
}

static bool same_attrs(const AttrMap& a, const AttrMap& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
    if (ia->first != ib->first || attr_str(ia->second) != attr_str(ib->second)) return false;
  return true;
}

bool operator==(const Op& a, const Op& b) {
  return a.kind == b.kind && a.operands == b.operands && a.results == b.results &&
         same_attrs(a.attrs, b.attrs) && a.regions == b.regions;
}

bool operator==(const Graph& a, const Graph& b) {
  if (a.inputs != b.inputs || a.outputs != b.outputs || a.ops != b.ops) return false;
  if (a.types.size() != b.types.size()) return false;
  for (auto ia = a.types.begin(), ib = b.types.begin(); ia != a.types.end(); ++ia, ++ib)
    if (ia->first != ib->first || ia->second.str() != ib->second.str()) return false;
  return true;
}

}  // namespace parity::ir
