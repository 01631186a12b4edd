// Inputs shared by the whole-plan checker and the staged prover: the region
// of a spec tensor a placement holds (the ranges of integer inputs are
// ir/id_ranges.h).
#pragma once
#include <map>
#include <string>

#include "ir/plan.h"
#include "ir/semantics.h"
#include "ir/tensor.h"
#include "ir/validate.h"

namespace parity::verify {

// The elements of `t` inside `box` (ir::placement_box).
template <class S>
ir::Tensor<S> extract(const ir::Tensor<S>& t, const ir::Box& box) {
  ir::Tensor<S> out;
  out.shape = box.size;
  int64_t n = ir::sem::num_el(box.size);
  out.data.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto idx = out.index_of(i);
    for (size_t k = 0; k < idx.size(); ++k) idx[k] += box.off[k];
    out.data.push_back(t.data.at(static_cast<size_t>(t.flat(idx))));
  }
  return out;
}

}  // namespace parity::verify
