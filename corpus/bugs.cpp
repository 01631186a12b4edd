#include "corpus/bugs.h"

#include "ir/error.h"

namespace parity::corpus {

const std::vector<BugInfo>& bugs() {
  static const std::vector<BugInfo> all;
  return all;
}

const BugInfo* find_bug(const std::string& name) {
  for (const auto& b : bugs())
    if (b.name == name) return &b;
  return nullptr;
}

BugSite parse_bug(const std::string& text) {
  BugSite s;
  s.name = text;
  return s;
}

void inject_bug(ir::Case&, const std::string& text) { throw ir::InvalidInput("unknown bug '" + text + "'"); }

}  // namespace parity::corpus
