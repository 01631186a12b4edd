#include "ir/error.h"

namespace parity::ir {

std::string Diag::text() const {
  std::string s;
  auto part = [&](const char* key, const std::string& v) {
    if (v.empty()) return;
    if (!s.empty()) s += ", ";
    s += key;
    s += v;
  };
  part("program ", program);
  part("op ", op);
  part("rank ", rank);
  if (!s.empty()) s += ": ";
  return s + message;
}

std::string Diag::plain() const {
  const std::string t = text();
  if (file.empty()) return t;
  // A problem of the file itself (a parse error) keeps its position; one of
  // a program names it (with the op's line) instead.
  if (program.empty() && op.empty() && rank.empty())
    return file + (line > 0 ? ":" + std::to_string(line) + ":" + std::to_string(col > 0 ? col : 1) : "") + ": " + t;
  return file + ", " + t;
}

std::string Diag::str() const {
  std::string s;
  if (!file.empty()) {
    s = file;
    if (line > 0) s += ":" + std::to_string(line) + ":" + std::to_string(col > 0 ? col : 1);
    s += ": ";
  }
  s += "error: " + text();
  if (!check.empty()) s += " [" + check + "]";
  return s;
}

}  // namespace parity::ir
