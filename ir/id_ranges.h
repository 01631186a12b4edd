// The range of each integer value of a spec: ids index an embedding table,
// labels a vocabulary, expert ids a one-hot of the expert count. Inputs that
// reach those ops through shape ops (`labels` reshaped or shifted by a slice
// before `cross_entropy`) get the range of the op they reach; the checker and
// the numeric runs draw ids from it, so a range too small would leave the ids
// a wrong shard offset mishandles untried.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "ir/spec.h"
#include "ir/validate.h"

namespace parity::ir {

// Ops whose result holds values of their operands, moved or repeated
// (reshape, slice, concat, cast, ...): ids pass through them unchanged.
bool moves_values(const std::string& kind);

// value -> its ids are in [0, range); values that reach no such op are absent.
std::map<std::string, int64_t> id_ranges(const Spec& s, const TypeMap& types, const Bindings& b);

}  // namespace parity::ir
