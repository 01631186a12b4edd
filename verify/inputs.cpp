#include "verify/inputs.h"

#include <functional>

namespace parity::verify {

std::map<std::string, int64_t> id_ranges(const ir::Spec& s, const ir::TypeMap& types, const ir::Bindings& b) {
  std::map<std::string, int64_t> r;
  auto dim = [&](const std::string& v, size_t k) -> int64_t {
    auto it = types.find(v);
    if (it == types.end() || it->second.rank() <= k) return 0;
    return it->second.shape[k].eval(b);
  };
  std::function<void(const ir::Graph&)> walk = [&](const ir::Graph& g) {
    for (const auto& op : g.ops) {
      for (const auto& reg : op.regions) walk(reg);
      if (op.kind == "embedding") r[op.operands[1]] = std::max(r[op.operands[1]], dim(op.operands[0], 0));
      if (op.kind == "cross_entropy" || op.kind == "cross_entropy_grad" || op.kind == "pick")
        r[op.operands[1]] = std::max(r[op.operands[1]], dim(op.operands[0], 1));
      if (op.kind == "embedding_grad") {
        auto v = std::get<ir::DimExpr>(*op.attr("vocab")).eval(b);
        r[op.operands[0]] = std::max(r[op.operands[0]], v);
      }
    }
  };
  walk(s.graph);
  return r;
}

}  // namespace parity::verify
