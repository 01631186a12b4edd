// A dense row-major tensor over any element domain (doubles for execution,
// symbolic terms for verification).
#pragma once
#include <cstdint>
#include <vector>

namespace parity::ir {

template <class S>
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<S> data;

  Tensor() = default;
  Tensor(std::vector<int64_t> s, S fill) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.assign(static_cast<size_t>(n), fill);
  }
  int64_t size() const { return static_cast<int64_t>(data.size()); }
  size_t rank() const { return shape.size(); }
  std::vector<int64_t> strides() const {
    std::vector<int64_t> st(shape.size(), 1);
    for (size_t k = shape.size(); k-- > 1;) st[k - 1] = st[k] * shape[k];
    return st;
  }
  // Multi-index of flat position `i`.
  std::vector<int64_t> index_of(int64_t i) const {
    std::vector<int64_t> idx(shape.size());
    for (size_t k = shape.size(); k-- > 0;) {
      idx[k] = i % shape[k];
      i /= shape[k];
    }
    return idx;
  }
  int64_t flat(const std::vector<int64_t>& idx) const {
    int64_t f = 0;
    for (size_t k = 0; k < shape.size(); ++k) f = f * shape[k] + idx[k];
    return f;
  }
};

}  // namespace parity::ir
