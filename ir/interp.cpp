#include "ir/interp.h"

#include <algorithm>
#include <optional>

namespace parity::ir {

const char* fn_name(Fn f) {
  switch (f) {
    case Fn::exp: return "exp";
    case Fn::log: return "log";
    case Fn::sqrt: return "sqrt";
    case Fn::rsqrt: return "rsqrt";
    case Fn::tanh: return "tanh";
    case Fn::sigmoid: return "sigmoid";
    case Fn::gelu: return "gelu";
    case Fn::gelu_grad: return "gelu'";
    case Fn::trunc: return "trunc";
  }
  return "?";
}

namespace {
// `loop`: the indices of the enclosing iterations, shared by the
// instructions of this one (null outside every loop).
void unroll(const Graph& g, const Bindings& b, const std::shared_ptr<const Bindings>& loop, const std::string& iter,
            std::vector<Instr>& out) {
  static const Bindings none;
  const Bindings& outer = loop ? *loop : none;
  for (const auto& op : g.ops) {
    if (op.kind != "loop") {
      out.push_back(Instr{Instr::exec, &op, nullptr, nullptr, loop, iter});
      continue;
    }
    const Graph& body = op.regions.at(0);
    const std::string& var = std::get<std::string>(*op.attr("var"));
    Bindings lb = b;
    for (const auto& [k, v] : outer) lb[k] = v;
    int64_t n = std::get<DimExpr>(*op.attr("count")).eval(lb);
    out.push_back(Instr{Instr::bind, nullptr, &body.inputs, &op.operands, loop, iter});
    for (int64_t k = 0; k < n; ++k) {
      auto inner = std::make_shared<Bindings>(outer);
      (*inner)["$" + var] = k;
      std::string it = iter + (iter.empty() ? "" : ",") + var + "=" + std::to_string(k);
      std::shared_ptr<const Bindings> shared = std::move(inner);
      unroll(body, b, shared, it, out);
      if (k + 1 < n) out.push_back(Instr{Instr::bind, nullptr, &body.inputs, &body.outputs, shared, it});
    }
    out.push_back(Instr{Instr::bind, nullptr, &op.results, &body.outputs, loop, iter});
  }
}
bool has_loop(const Graph& g) {
  for (const auto& op : g.ops)
    if (op.kind == "loop") return true;
  return false;
}

// `flatten`'s count, saturated at `cap + 1`; `lb` holds the loop indices.
size_t count_flat(const Graph& g, Bindings& lb, size_t cap) {
  size_t n = 0;
  for (const auto& op : g.ops) {
    if (n > cap) return cap + 1;
    if (op.kind != "loop") {
      ++n;
      continue;
    }
    const Graph& body = op.regions.at(0);
    const std::string var = "$" + std::get<std::string>(*op.attr("var"));
    const int64_t k = std::get<DimExpr>(*op.attr("count")).eval(lb);
    n += 2;  // binding the loop's inputs and its results
    if (k <= 0) continue;
    const auto iters = static_cast<size_t>(k);
    if (iters > cap) return cap + 1;
    n += iters - 1;  // binding each iteration's outputs to the next one's inputs
    if (!has_loop(body)) {
      const size_t per = body.ops.size();
      if (per > 0 && iters > (cap + 1) / per) return cap + 1;
      n += iters * per;
      continue;
    }
    const auto saved = lb.find(var) != lb.end() ? std::optional<int64_t>(lb[var]) : std::nullopt;
    for (size_t i = 0; i < iters && n <= cap; ++i) {
      lb[var] = static_cast<int64_t>(i);
      n += count_flat(body, lb, cap);
    }
    if (saved) lb[var] = *saved; else lb.erase(var);
  }
  return n > cap ? cap + 1 : n;
}
}  // namespace

size_t flat_size(const Graph& g, const Bindings& b, size_t cap) {
  cap = std::min<size_t>(cap, size_t{1} << 62);  // so that the sums below cannot wrap
  Bindings lb = b;
  return count_flat(g, lb, cap);
}

std::vector<Instr> flatten(const Graph& g, const Bindings& b) {
  std::vector<Instr> out;
  unroll(g, b, nullptr, "", out);
  for (size_t i = 0; i < out.size(); ++i) out[i].seq = i;
  return out;
}

}  // namespace parity::ir
