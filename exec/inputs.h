// Seed-generated values for every spec input, the same on every rank and every
// backend (the generator is std::mt19937_64 with explicit transforms, not the
// implementation-defined std distributions).
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "exec/kernels.h"
#include "ir/plan.h"

namespace parity::exec {

// Values by name in spec coordinates. Doubles hold every f32 and bf16 value exactly.
using Values = std::map<std::string, ir::Tensor<double>>;

// Floats uniform in [-1, 1] (rounded to bf16 for bf16 runs, to f32 for f32);
// integer ids uniform in [0, range) where range is inferred from their use (rows
// of an embedding table, columns of logits, an embedding_grad vocab; 16 when
// unused), and a quarter of them negative where the spec tests for negative
// ids (an ignore_index of -100: ir/id_ranges.h); i1 masks 0/1 with at least one 1 per tensor (a masked mean never
// divides by zero).
Values make_inputs(const ir::Spec& spec, uint64_t seed, DType dtype);

// The id range of every integer spec input used as an index (see make_inputs).
std::map<std::string, int64_t> id_ranges(const ir::Spec& spec);

}  // namespace parity::exec
