// Symbolic inputs shared by the whole-plan checker and the staged prover.
#pragma once
#include <map>
#include <string>

#include "ir/validate.h"

namespace parity::verify {

// Ranges of integer inputs: ids index an embedding table, labels a vocabulary.
std::map<std::string, int64_t> id_ranges(const ir::Spec& s, const ir::TypeMap& types, const ir::Bindings& b);

}  // namespace parity::verify
