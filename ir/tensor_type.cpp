#include "ir/tensor_type.h"

namespace parity::ir {

std::string TensorType::str() const {
  std::string s = dtype_name(dtype);
  s += "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + shape[i].str();
  return s + "]";
}

std::vector<int64_t> concrete_shape(const TensorType& t, const Bindings& b) {
  std::vector<int64_t> out;
  out.reserve(t.shape.size());
  for (const auto& d : t.shape) out.push_back(d.eval(b));
  return out;
}

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace parity::ir
