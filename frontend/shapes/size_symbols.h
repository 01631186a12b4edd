// Size symbols for static shapes. An importer whose shapes are numbers (MLIR
// today, XLA's HLO next) writes a 4096-wide matmul with 4096 everywhere, and
// the reduction shrinks only sizes that are dim symbols. `give_size_symbols`
// rewrites such a case exactly: each distinct size (>= 2) of the spec's inputs
// and outputs becomes a dim `N<size>` bound to it, and every extent equal to
// one of them, or to one of them over a product of mesh axis sizes (a shard),
// is written as that expression: declared types, the attributes ops declare
// `extent`, placement offsets and sizes.
//
// Bound to the given sizes, the rewritten case is the case as given, number
// for number, so the rewrite by itself changes no verdict; what the reduction
// then concludes from the symbols is its own theorem (docs/soundness.md).
// Where the rewrite does not hold together at other sizes (two equal sizes
// that are not the same dim, say), the case keeps its numbers.
#pragma once
#include <string>

#include "ir/plan.h"

namespace parity::frontend {

struct SizeSymbols {
  ir::Bindings dims;  // each symbol and the size it stands for
  std::string kept;   // why the case keeps its numbers; empty when rewritten
};

// Rewrites `c` in place (or leaves it as it is, saying why in `kept`). `c` must
// have a spec and no dim symbols of its own.
SizeSymbols give_size_symbols(ir::Case& c);

}  // namespace parity::frontend
