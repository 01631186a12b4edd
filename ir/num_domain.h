// The numeric element domain (double or long double) for ir::eval_local: real
// execution of the reference semantics.
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ir/semantics.h"

namespace parity::ir {

template <class F>
F eval_fn(Fn f, F x) {
  switch (f) {
    case Fn::exp: return std::exp(x);
    case Fn::log: return std::log(x);
    case Fn::sqrt: return std::sqrt(x);
    case Fn::rsqrt: return F(1) / std::sqrt(x);
    case Fn::tanh: return std::tanh(x);
    case Fn::sigmoid: return F(1) / (F(1) + std::exp(-x));
    case Fn::gelu: {
      const F k = std::sqrt(F(2) / F(M_PI));
      return F(0.5) * x * (F(1) + std::tanh(k * (x + F(0.044715) * x * x * x)));
    }
    case Fn::trunc: return std::trunc(x);
    case Fn::gelu_grad: {
      const F k = std::sqrt(F(2) / F(M_PI));
      F u = k * (x + F(0.044715) * x * x * x);
      F t = std::tanh(u);
      return F(0.5) * (F(1) + t) + F(0.5) * x * (F(1) - t * t) * k * (F(1) + F(3) * F(0.044715) * x * x);
    }
  }
  return x;
}

// Set when a `topk_mask` row ties at its k-th value: the selection then
// depends on the order ties break in, which a rounding can decide (a sigmoid
// of logits of a few hundred is 1.0 for several experts). Per thread, like
// the floating-point exception flags it sits beside.
inline thread_local bool topk_tied = false;

template <class F>
struct NumDomain {
  using S = F;
  S c(double v) { return static_cast<F>(v); }
  S add(S a, S b) { return a + b; }
  S sub(S a, S b) { return a - b; }
  S mul(S a, S b) { return a * b; }
  S div(S a, S b) { return a / b; }
  S neg(S a) { return -a; }
  S sum(const std::vector<S>& v) { return std::accumulate(v.begin(), v.end(), F(0)); }
  S apply(Fn f, S a) { return eval_fn(f, a); }
  S max(S a, S b) { return a < b ? b : a; }
  S min(S a, S b) { return b < a ? b : a; }
  S ind(S id, int64_t k) { return std::llround(static_cast<double>(id)) == k ? F(1) : F(0); }
  S powc(S a, double e) { return std::pow(a, static_cast<F>(e)); }
  std::vector<S> topk_mask(const std::vector<S>& row, int64_t k) {
    // Ties break toward the lower index, as torch.topk does on CPU.
    std::vector<size_t> idx(row.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return row[b] < row[a]; });
    if (k > 0 && k < static_cast<int64_t>(idx.size()) &&
        row[idx[static_cast<size_t>(k - 1)]] == row[idx[static_cast<size_t>(k)]])
      topk_tied = true;
    std::vector<S> out(row.size(), F(0));
    for (int64_t i = 0; i < k && i < static_cast<int64_t>(idx.size()); ++i) out[idx[static_cast<size_t>(i)]] = F(1);
    return out;
  }
};

}  // namespace parity::ir
