// Matmul and reductions.
#include "ir/op_registry.h"

namespace parity::ir {

namespace {
std::vector<TensorType> matmul_rule(const ShapeCtx& c) {
  const auto& a = c.in[0].shape;
  const auto& b = c.in[1].shape;
  if (a.size() < 2 || b.size() < 2) c.fail("matmul operands need rank >= 2, got " + c.in[0].str() + " and " + c.in[1].str());
  bool ta = c.ival("transpose_a", 0) != 0, tb = c.ival("transpose_b", 0) != 0;
  DimExpr m = ta ? a[a.size() - 1] : a[a.size() - 2];
  DimExpr ka = ta ? a[a.size() - 2] : a[a.size() - 1];
  DimExpr kb = tb ? b[b.size() - 1] : b[b.size() - 2];
  DimExpr n = tb ? b[b.size() - 2] : b[b.size() - 1];
  c.expect_same(ka, kb, "matmul contraction dims differ");
  std::vector<DimExpr> ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  auto out = broadcast_shapes(c, ba, bb);
  out.push_back(m);
  out.push_back(n);
  return {TensorType{c.in[0].dtype, out}};
}

std::vector<TensorType> reduce_rule(const ShapeCtx& c) {
  Dims dims = c.ints("dims");
  bool keep = c.ival("keepdim", 0) != 0;
  std::vector<bool> red(c.in[0].rank(), false);
  for (const auto& d : dims) {
    size_t k = c.axis(c.eval(d), 0);
    if (red[k]) c.fail("dim " + std::to_string(k) + " reduced twice");
    red[k] = true;
  }
  std::vector<DimExpr> out;
  for (size_t k = 0; k < red.size(); ++k) {
    if (!red[k]) out.push_back(c.in[0].shape[k]);
    else if (keep) out.push_back(DimExpr(1));
  }
  return {TensorType{c.in[0].dtype, out}};
}
}  // namespace

void register_linalg_ops(OpRegistry& r) {
  OpDef matmul{"matmul", 2, 2, {{"transpose_a", AttrKind::Int, false}, {"transpose_b", AttrKind::Int, false}},
               matmul_rule, "batched a @ b over the last two dims, optional transposes"};
  matmul.linear = matmul.contracts = true;
  r.add(std::move(matmul));
  for (const char* n : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    OpDef d{n, 1, 1, {{"dims", AttrKind::Ints, true}, {"keepdim", AttrKind::Int, false}}, reduce_rule,
            "reduction over dims"};
    d.linear = d.contracts = std::string(n) != "reduce_max";
    r.add(std::move(d));
  }
}

}  // namespace parity::ir
