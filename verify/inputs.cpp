#include "verify/inputs.h"

#include "ir/id_ranges.h"

namespace parity::verify {

std::map<std::string, int64_t> id_ranges(const ir::Spec& s, const ir::TypeMap& types, const ir::Bindings& b,
                                         ir::NegativeIds* negative) {
  return ir::id_ranges(s, types, b, negative);
}

}  // namespace parity::verify
