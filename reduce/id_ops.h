// Ops that compare integer values (token ids, labels, expert ids) with an
// offset: `one_hot`, `embedding`, `embedding_grad`, `pick`. Their result is a
// switch on `id == offset + j`, not an affine function of the offset, so the
// reductions' arguments hold for them only where the ids range over the
// whole table (docs/soundness.md, "Ids compared with an offset"):
// - a coordinate or loop index in the offset, compared with ids the program
//   computes (`5` from `0*count + 5`, not an input), fires on one rank or one
//   microbatch only: that axis and loop count are kept;
// - a literal id in the offset (a pad token 32000) is an id as given but not
//   once the vocabulary is reduced below it: the range's sizes are kept.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/plan.h"

namespace parity::reduce {

using Why = std::map<std::string, std::string>;  // symbol -> why it is kept

// Axes (into `axes`) and loop counts' dims (into `frozen`) read by the offset
// of an id op whose ids the program computes.
void id_offset_blockers(const ir::Case& c, Why& axes, Why& frozen);

// A literal offset of an id op and the range of the ids it compares.
struct IdLit {
  int64_t value;
  ir::DimExpr range;  // the ids are in [0, range)
  std::string where;
};
std::vector<IdLit> id_literals(const ir::Case& c, const ir::Bindings& given);

// Pins the sizes of a range that holds the literal as given and not at `now`.
void id_literal_pins(const std::vector<IdLit>& lits, const ir::Bindings& given,
                     const ir::Bindings& now, Why& pins);

}  // namespace parity::reduce
