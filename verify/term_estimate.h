// About how many symbolic terms checking an instance builds: a size guard
// that makes a tensor kept too large (a vocabulary of 32768 beside a literal
// token id) an UNKNOWN in seconds instead of an exhausted machine.
#pragma once
#include <cstddef>

#include "ir/plan.h"
#include "ir/validate.h"

namespace parity::verify {

// Every element of every result and operand of every unrolled instruction
// of every rank (with `ranks`) and of the spec, a matmul's result elements
// once per contracted index, a row-normalizing op's (softmax, its gradient,
// cross-entropy's gradient, norms) once per element of its row; counted
// until past `cap`.
// `spec_types`: the spec's types when the caller has them (else inferred).
// `largest`: gets the largest count of one spec instruction.
size_t symbolic_terms_upto(const ir::Case& c, const ir::Bindings& base, size_t cap,
                           bool ranks = true, const ir::TypeMap* spec_types = nullptr,
                           size_t* largest = nullptr);

}  // namespace parity::verify
