// Diagnostics for malformed input: every message names where (file, program,
// op, rank) and what was expected, so a user can fix the plan without a debugger.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace parity::ir {

struct Diag {
  std::string file;
  std::string program;
  std::string op;
  std::string rank;
  std::string message;
  // `FILE:LINE:COL: error: [program P, op O, rank R: ]MESSAGE [check]`, as
  // compilers write it, for editors and CI problem matchers (`FILE: error:`
  // where no position is known, `error:` alone where no file is).
  std::string str() const;
  // The same without the position and the check: `[program P, ...: ]MESSAGE`.
  std::string text() const;
  // `FILE, program P, ...: MESSAGE`: inside another message (a reason).
  std::string plain() const;
  std::string spec_value = {};  // a coverage gap: the spec output with elements no placement covers
  int line = 0, col = 0;        // 1-based position in `file`; 0 when unknown
  std::string check = {};       // the check that failed (`shape-rule`, `placement-bounds`, ...; docs/cli.md)
};

// Thrown for input that cannot be understood at all (parse errors, bad dims).
class InvalidInput : public std::runtime_error {
 public:
  explicit InvalidInput(Diag d) : std::runtime_error(d.plain()), diag_(std::move(d)) {}
  explicit InvalidInput(const std::string& msg) : InvalidInput(Diag{"", "", "", "", msg}) {}
  const Diag& diag() const { return diag_; }

 private:
  Diag diag_;
};

// Collects every structural problem of one input instead of stopping at the first.
struct DiagList {
  std::vector<Diag> items;
  void add(Diag d) { items.push_back(std::move(d)); }
  bool empty() const { return items.empty(); }
};

}  // namespace parity::ir
