// Named bug injectors: mutations of a generated case that reproduce the bug
// classes of real training frameworks (see /work/shared/REFERENCE.md). Each can
// be placed at one rank (the program is split so that rank runs its own, MPMD),
// at one microbatch (the mutation is conditioned on $mb), or at one layer.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/plan.h"

namespace parity::corpus {

struct BugInfo {
  std::string name;
  std::string description;
  std::string needs;         // what the case must have, e.g. "dp > 1"
  int expect_exit = 1;       // 1: a mismatch; 2: a structural error
  std::string expect_error;  // for structural bugs: a substring of the message
};

const std::vector<BugInfo>& bugs();
const BugInfo* find_bug(const std::string& name);

// Where a bug goes: `NAME`, `NAME@rank=R`, `NAME@mb=M`, `NAME@layer=L`.
struct BugSite {
  std::string name;
  std::optional<int64_t> rank, mb, layer;
};
BugSite parse_bug(const std::string& text);

// Mutates `c`. Throws ir::InvalidInput when the bug cannot apply to this case
// (naming what it needs).
void inject_bug(ir::Case& c, const std::string& text);

// Gives `rank` its own copy of its program (the rest of that program's ranks
// keep theirs, split by coordinate) and copies the placements; returns the
// new program's name. Throws ir::InvalidInput when the rank runs nothing.
std::string isolate_rank(ir::Plan& p, int64_t rank);

}  // namespace parity::corpus
