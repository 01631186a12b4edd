#pragma once
#include <string>
#include <vector>

#include "ir/dim_expr.h"
#include "ir/dtype.h"

namespace parity::ir {

struct TensorType {
  DType dtype = DType::f32;
  std::vector<DimExpr> shape;  // empty: a scalar
  size_t rank() const { return shape.size(); }
  std::string str() const;
};

// Concrete sizes of `t` under `b` (throws InvalidInput naming the dim).
std::vector<int64_t> concrete_shape(const TensorType& t, const Bindings& b);
int64_t num_elements(const std::vector<int64_t>& shape);

}  // namespace parity::ir
