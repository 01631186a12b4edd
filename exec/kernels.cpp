#include "exec/kernels.h"

#include <cblas.h>
#include <fmt/format.h>

#include "exec/cuda_kernels.h"
#include "ir/op_registry.h"
#include "ir/semantics.h"

namespace parity::exec {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::bf16:
      return "bf16";
    case DType::f64:
      return "f64";
  }
  return "?";
}

std::optional<DType> parse_dtype(const std::string& s) {
  if (s == "f32") return DType::f32;
  if (s == "bf16") return DType::bf16;
  if (s == "f64") return DType::f64;
  return std::nullopt;
}

double dtype_epsilon(DType t) {
  switch (t) {
    case DType::f32:
      return 0x1p-23;
    case DType::bf16:
      return 0x1p-7;
    case DType::f64:
      return 0x1p-52;
  }
  return 0;
}

const char* sum_order_name(SumOrder o) {
  switch (o) {
    case SumOrder::forward:
      return "forward";
    case SumOrder::reverse:
      return "reverse";
    case SumOrder::pairwise:
      return "pairwise";
  }
  return "?";
}

namespace {
template <class F>
F pairwise(const F* v, size_t n, bool bf16) {
  if (n == 0) return F(0);
  if (n == 1) return v[0];
  size_t h = n / 2;
  F s = pairwise(v, h, bf16) + pairwise(v + h, n - h, bf16);
  return bf16 ? static_cast<F>(round_bf16(static_cast<float>(s))) : s;
}

std::string shape_str(const std::vector<int64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ","));
}
}  // namespace

template <class F>
F ExecDomain<F>::sum(const std::vector<F>& v) const {
  F s = F(0);
  switch (order) {
    case SumOrder::forward:
      for (const F& x : v) s += x;
      return s;
    case SumOrder::reverse:
      for (size_t i = v.size(); i-- > 0;) s += v[i];
      return s;
    case SumOrder::pairwise:
      return pairwise(v.data(), v.size(), bf16_partials);
  }
  return s;
}

void check_matmul(const std::vector<int64_t>& a, const std::vector<int64_t>& b, bool ta, bool tb) {
  if (a.size() < 2 || b.size() < 2)
    throw ir::EvalError("matmul needs operands of rank >= 2, got " + shape_str(a) + " and " +
                        shape_str(b));
  int64_t ka = ta ? a[a.size() - 2] : a.back(), kb = tb ? b.back() : b[b.size() - 2];
  if (ka != kb)
    throw ir::EvalError(fmt::format("matmul inner dims differ: {}{} x {}{}", shape_str(a),
                                    ta ? "^T" : "", shape_str(b), tb ? "^T" : ""));
  ir::sem::bcast_shape(std::vector<int64_t>(a.begin(), a.end() - 2),
                       std::vector<int64_t>(b.begin(), b.end() - 2));
}

namespace {
void gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
          float* c) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
}
void gemm(bool ta, bool tb, int m, int n, int k, const double* a, int lda, const double* b, int ldb,
          double* c) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0, a, lda, b, ldb, 0.0, c, n);
}
}  // namespace

template <class F>
Tensor<F> matmul_blas(const Tensor<F>& a, const Tensor<F>& b, bool ta, bool tb) {
  check_matmul(a.shape, b.shape, ta, tb);
  size_t ra = a.rank(), rb = b.rank();
  int64_t m = ta ? a.shape[ra - 1] : a.shape[ra - 2], k = ta ? a.shape[ra - 2] : a.shape[ra - 1];
  int64_t n = tb ? b.shape[rb - 2] : b.shape[rb - 1];
  std::vector<int64_t> ba(a.shape.begin(), a.shape.end() - 2),
      bb(b.shape.begin(), b.shape.end() - 2);
  Tensor<F> batch;  // only its shape: maps a batch number to its index
  batch.shape = ir::sem::bcast_shape(ba, bb);
  Tensor<F> out(batch.shape, F(0));
  out.shape.push_back(m);
  out.shape.push_back(n);
  out.data.assign(static_cast<size_t>(ir::sem::num_el(out.shape)), F(0));
  if (m == 0 || n == 0 || k == 0) return out;
  int64_t nb = ir::sem::num_el(batch.shape);
  for (int64_t i = 0; i < nb; ++i) {
    auto idx = batch.index_of(i);
    const F* pa = a.data.data() + ir::sem::bcast_flat(ba, idx) * m * k;
    const F* pb = b.data.data() + ir::sem::bcast_flat(bb, idx) * k * n;
    gemm(ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), pa,
         static_cast<int>(ta ? m : k), pb, static_cast<int>(tb ? k : n),
         out.data.data() + i * m * n);
  }
  return out;
}

template <class F>
Tensor<F> matmul_ref(const Tensor<F>& a, const Tensor<F>& b, bool ta, bool tb, SumOrder order) {
  check_matmul(a.shape, b.shape, ta, tb);
  ir::Op op;
  op.kind = "matmul";
  op.attrs["transpose_a"] = ir::DimExpr(ta ? 1 : 0);
  op.attrs["transpose_b"] = ir::DimExpr(tb ? 1 : 0);
  ExecDomain<F> d;
  d.order = order;
  return ir::eval_local(d, op, {&a, &b}, ir::Bindings{})[0];
}

template <class F>
std::vector<Tensor<F>> Kernels<F>::run(const ir::Op& op, const std::vector<const Tensor<F>*>& in,
                                       const ir::Bindings& b) {
  // eval_local indexes operands without checking their count: check it here.
  const ir::OpDef* def = ir::OpRegistry::get().find(op.kind);
  if (!def) throw ir::EvalError("unknown op '" + op.kind + "'");
  int64_t k = static_cast<int64_t>(in.size());
  if (k < def->min_operands || (def->max_operands >= 0 && k > def->max_operands))
    throw ir::EvalError(
        fmt::format("'{}' takes {} operands, got {}", op.kind, def->min_operands, k));
  if (op.kind == "matmul") {
    bool ta = ir::sem::int_attr(op, "transpose_a", b, 0) != 0,
         tb = ir::sem::int_attr(op, "transpose_b", b, 0) != 0;
    if (cfg_.device == Device::cuda) return {cuda::matmul(*in[0], *in[1], ta, tb)};
    if (cfg_.blas) return {matmul_blas(*in[0], *in[1], ta, tb)};
    check_matmul(in[0]->shape, in[1]->shape, ta, tb);
  }
  return ir::eval_local(dom_, op, in, b);
}

template struct ExecDomain<float>;
template struct ExecDomain<double>;
template class Kernels<float>;
template class Kernels<double>;
template Tensor<float> matmul_blas(const Tensor<float>&, const Tensor<float>&, bool, bool);
template Tensor<double> matmul_blas(const Tensor<double>&, const Tensor<double>&, bool, bool);
template Tensor<float> matmul_ref(const Tensor<float>&, const Tensor<float>&, bool, bool, SumOrder);
template Tensor<double> matmul_ref(const Tensor<double>&, const Tensor<double>&, bool, bool,
                                   SumOrder);

}  // namespace parity::exec
