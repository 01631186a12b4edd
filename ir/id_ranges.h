// The range of each integer value of a spec: ids index an embedding table,
// labels a vocabulary, expert ids a one-hot of the expert count. Inputs that
// reach those ops through shape ops (`labels` reshaped or shifted by a slice
// before `cross_entropy`) get the range of the op they reach; the checker and
// the numeric runs draw ids from it, so a range too small would leave the ids
// a wrong shard offset mishandles untried.
#pragma once
#include <cstdint>
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/spec.h"
#include "ir/validate.h"

namespace parity::ir {

// Ops whose result holds values of their operands, moved or repeated
// (reshape, slice, concat, cast, ...): ids pass through them unchanged.
bool moves_values(const std::string& kind);

// value -> its ids are in [0, range); values that reach no such op are absent.
// `negative` gets, per value, the negative ids the spec tests for besides
// (a one_hot at offset -100: the ignore_index of a label): ids too, which
// the checker and the runs draw beside the range (at most 16 per value).
using NegativeIds = std::map<std::string, std::vector<int64_t>>;
std::map<std::string, int64_t> id_ranges(const Spec& s, const TypeMap& types, const Bindings& b,
                                         NegativeIds* negative = nullptr);

// An id drawn for a run or a screening point: one of `negative` a quarter of
// the time (the ignored tokens of a batch), else uniform in [lo, hi).
// Explicit transforms, so runs agree across standard libraries.
inline int64_t draw_id(int64_t lo, int64_t hi, const std::vector<int64_t>& negative, std::mt19937_64& g) {
  if (!negative.empty() && g() % 4 == 0) return negative[g() % negative.size()];
  return lo + static_cast<int64_t>(g() % static_cast<uint64_t>(std::max<int64_t>(hi - lo, 1)));
}

}  // namespace parity::ir
