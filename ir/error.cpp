#include "ir/error.h"

namespace parity::ir {

std::string Diag::str() const {
  std::string s;
  auto part = [&](const char* key, const std::string& v) {
    if (v.empty()) return;
    if (!s.empty()) s += ", ";
    s += key;
    s += v;
  };
  if (!file.empty()) s = file;
  part("program ", program);
  part("op ", op);
  part("rank ", rank);
  if (!s.empty()) s += ": ";
  return s + message;
}

}  // namespace parity::ir
