// Numeric kernels for every local op. The semantics are ir::eval_local's (one
// source for execution and verification), run over ExecDomain<F>; matmul takes
// a fast path through OpenBLAS (or cuBLAS on --backend cuda) with the same
// shapes and broadcasting. bf16 is emulated: f32 compute, results rounded.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "exec/bf16.h"
#include "ir/graph.h"
#include "ir/num_domain.h"
#include "ir/tensor.h"

namespace parity::exec {

template <class F>
using Tensor = ir::Tensor<F>;

// The precision of a run: f32 and bf16 compute in float, f64 in double.
enum class DType { f32, bf16, f64 };
const char* dtype_name(DType t);
std::optional<DType> parse_dtype(const std::string& s);
// Unit roundoff scale of the format: the gap between 1 and the next value.
double dtype_epsilon(DType t);

// How sums are associated. Runs use forward (left to right); the control run of
// compare.h uses pairwise to measure how far results move under reassociation.
enum class SumOrder { forward, reverse, pairwise };
const char* sum_order_name(SumOrder o);

template <class F>
struct ExecDomain : ir::NumDomain<F> {
  SumOrder order = SumOrder::forward;
  // Pairwise partial sums stored in bf16, as a kernel that splits a reduction
  // and keeps its partials in the run dtype (the control of a bf16 run).
  bool bf16_partials = false;
  // Hides NumDomain::sum: eval_local calls the domain's own.
  F sum(const std::vector<F>& v) const;
};

enum class Device { cpu, cuda };

struct KernelConfig {
  DType dtype = DType::f32;
  SumOrder order = SumOrder::forward;  // pairwise partials are stored in `dtype`
  bool blas = true;                    // matmul through OpenBLAS (when on the CPU)
  Device device = Device::cpu;         // cuda: matmul through cuBLAS
};

template <class F>
class Kernels {
 public:
  explicit Kernels(KernelConfig c) : cfg_(c) {
    dom_.order = c.order;
    dom_.bf16_partials = c.dtype == DType::bf16;
  }
  // Evaluates one local op; throws ir::EvalError on operands it cannot take.
  std::vector<Tensor<F>> run(const ir::Op& op, const std::vector<const Tensor<F>*>& in,
                             const ir::Bindings& b);
  const KernelConfig& config() const { return cfg_; }

 private:
  KernelConfig cfg_;
  ExecDomain<F> dom_;
};

// bf16 runs round every element to bf16; other dtypes leave `x` alone.
template <class F>
void round_to(DType t, Tensor<F>& x) {
  if (t != DType::bf16) return;
  for (auto& v : x.data) v = static_cast<F>(round_bf16(static_cast<float>(v)));
}

// matmul with numpy batch broadcasting; a and b are [..., m, k] and [..., k, n]
// (transposed in their last two dims when ta / tb). Throws ir::EvalError on
// shapes that do not fit.
template <class F>
Tensor<F> matmul_blas(const Tensor<F>& a, const Tensor<F>& b, bool ta, bool tb);
// The reference: ir::eval_local's matmul over ExecDomain<F> in `order`.
template <class F>
Tensor<F> matmul_ref(const Tensor<F>& a, const Tensor<F>& b, bool ta, bool tb,
                     SumOrder order = SumOrder::forward);
// Shape checks shared by both (the reference itself does not check).
void check_matmul(const std::vector<int64_t>& a, const std::vector<int64_t>& b, bool ta, bool tb);

}  // namespace parity::exec
