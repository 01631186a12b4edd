#include "ir/interp.h"

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
}  // namespace

std::vector<Instr> flatten(const Graph& g, const Bindings& b) {
  std::vector<Instr> out;
  unroll(g, b, nullptr, "", out);
  for (size_t i = 0; i < out.size(); ++i) out[i].seq = i;
  return out;
}

}  // namespace parity::ir
