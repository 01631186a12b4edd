#pragma once
#include <optional>
#include <string>

namespace parity::ir {

enum class DType { f32, bf16, f64, i64, i1 };

const char* dtype_name(DType t);
std::optional<DType> parse_dtype(const std::string& s);
inline bool is_float(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f64; }

}  // namespace parity::ir
