// Concrete evaluation of every term of a table (children have smaller ids, so
// one pass in id order suffices).
#pragma once
#include <algorithm>

#include "ir/num_domain.h"

namespace parity::verify {

template <class F>
std::vector<F> TermTable::eval_all(const std::vector<F>& var_vals) const {
  std::vector<F> v(nodes_.size());
  ir::NumDomain<F> nd;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    switch (n.kind) {
      case TK::Const: v[i] = static_cast<F>(n.nums[0].to_long_double()); break;
      case TK::Var:
      case TK::IntVar: v[i] = var_vals[static_cast<size_t>(n.aux)]; break;
      case TK::Sum: {
        F s = static_cast<F>(n.nums.back().to_long_double());
        for (size_t k = 0; k < n.args.size(); ++k)
          s += static_cast<F>(n.nums[k].to_long_double()) * v[n.args[k]];
        v[i] = s;
        break;
      }
      case TK::Prod: {
        F p = 1;
        for (size_t k = 0; k < n.args.size(); ++k) {
          int64_t e = n.nums[k].num();
          F b = v[n.args[k]];
          for (int64_t j = 0; j < (e < 0 ? -e : e); ++j) p = e < 0 ? p / b : p * b;
        }
        v[i] = p;
        break;
      }
      case TK::App: v[i] = ir::eval_fn(static_cast<ir::Fn>(n.aux), v[n.args[0]]); break;
      case TK::Max:
      case TK::Min: {
        F m = v[n.args[0]];
        for (auto a : n.args) m = n.kind == TK::Max ? std::max(m, v[a]) : std::min(m, v[a]);
        v[i] = m;
        break;
      }
      case TK::Ind: v[i] = nd.ind(v[n.args[0]], n.nums[0].num()); break;
      case TK::PowC: v[i] = std::pow(v[n.args[0]], static_cast<F>(n.nums[0].to_double())); break;
      case TK::TopK: {
        std::vector<F> row;
        for (auto a : n.args) row.push_back(v[a]);
        v[i] = nd.topk_mask(row, n.nums[0].num())[static_cast<size_t>(n.aux)];
        break;
      }
    }
  }
  return v;
}

}  // namespace parity::verify
