#include "verify/term_estimate.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <variant>

#include "ir/interp.h"
#include "ir/validate.h"

namespace parity::verify {

namespace {

size_t mul(size_t a, size_t b) { return b && a > SIZE_MAX / b ? SIZE_MAX : a * b; }
size_t add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

struct Estimator {
  const ir::Bindings& base;
  mutable size_t largest = 0;  // of one instruction

  size_t elems(const ir::TypeMap& t, const std::string& v) const {
    auto it = t.find(v);
    if (it == t.end()) return 1;
    size_t n = 1;
    for (const auto& d : it->second.shape) {
      int64_t x = 1;
      if (d.try_eval(base, x) && x > 0) n = mul(n, static_cast<size_t>(x));
    }
    return n;
  }
  // Extent of dim `k` (negative: from the end) of `v`'s type, 1 if unknown.
  size_t extent(const ir::TypeMap& t, const std::string& v, int64_t k) const {
    auto it = t.find(v);
    if (it == t.end()) return 1;
    const auto rank = static_cast<int64_t>(it->second.shape.size());
    if (k < 0) k += rank;
    int64_t x = 1;
    if (k < 0 || k >= rank || !it->second.shape[static_cast<size_t>(k)].try_eval(base, x) || x < 1)
      return 1;
    return static_cast<size_t>(x);
  }
  size_t op(const ir::TypeMap& t, const ir::Op& o) const {
    size_t n = 0;
    for (const auto& v : o.operands) n += elems(t, v);
    for (const auto& r : o.results) n += elems(t, r);
    if (o.operands.empty() || o.results.empty()) return n;
    const size_t out = elems(t, o.results[0]);
    auto int_attr = [&](const char* name, int64_t dflt) {
      const ir::Attr* a = o.attr(name);
      if (a && std::holds_alternative<ir::DimExpr>(*a) && std::get<ir::DimExpr>(*a).is_const())
        return std::get<ir::DimExpr>(*a).const_value();
      return dflt;
    };
    if (o.kind == "matmul")
      n += mul(out, extent(t, o.operands[0], int_attr("transpose_a", 0) ? -2 : -1));
    if (o.kind == "softmax" || o.kind == "log_softmax" || o.kind == "softmax_grad" ||
        o.kind == "rmsnorm" || o.kind == "layernorm")
      n += mul(out, extent(t, o.operands[0], int_attr("dim", -1)));
    if (o.kind == "cross_entropy_grad") n += mul(out, extent(t, o.operands[0], -1));
    return n;
  }
  size_t graph(const ir::Graph& g, const ir::Mesh* mesh, const ir::TypeMap* known = nullptr) const {
    if (known) return count(g, *known);
    ir::DiagList ignored;
    return count(g, ir::check_graph(g, base, mesh, ir::Diag{}, ignored));
  }
  size_t count(const ir::Graph& g, const ir::TypeMap& t) const {
    // A loop of 10^12 iterations is not unrolled to be counted: past this
    // many instructions no symbolic or numeric check is in reach anyway.
    constexpr size_t kUnrollCap = 100'000'000;
    if (ir::flat_size(g, base, kUnrollCap) > kUnrollCap) return SIZE_MAX;
    size_t n = 0;
    for (const ir::Instr& ins : ir::flatten(g, base))
      if (ins.kind == ir::Instr::exec && ins.op) {
        const size_t x = op(t, *ins.op);
        largest = std::max(largest, x);
        n = add(n, x);
      }
    return n;
  }
};

}  // namespace

size_t symbolic_terms_upto(const ir::Case& c, const ir::Bindings& base, size_t cap, bool ranks,
                           const ir::TypeMap* spec_types, size_t* largest) {
  Estimator e{base};
  size_t total = c.spec ? e.graph(c.spec->graph, nullptr, spec_types) : 0;
  if (largest) *largest = e.largest;
  if (!ranks) return total;
  std::map<std::string, size_t> per;
  for (const auto& prog : c.plan.programs) per[prog.name] = e.graph(prog.graph, &c.plan.mesh);
  for (int64_t r = 0; r < c.plan.mesh.num_ranks() && total <= cap; ++r)
    if (const ir::Program* prog = c.plan.program_of(r)) total = add(total, per[prog->name]);
  return total;
}

}  // namespace parity::verify
