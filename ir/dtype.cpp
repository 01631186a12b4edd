#include "ir/dtype.h"

namespace parity::ir {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::bf16: return "bf16";
    case DType::f64: return "f64";
    case DType::i64: return "i64";
    case DType::i1: return "i1";
  }
  return "?";
}

std::optional<DType> parse_dtype(const std::string& s) {
  for (DType t : {DType::f32, DType::bf16, DType::f64, DType::i64, DType::i1})
    if (s == dtype_name(t)) return t;
  return std::nullopt;
}

}  // namespace parity::ir
