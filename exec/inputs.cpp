#include "exec/inputs.h"

#include <cmath>
#include <functional>
#include <random>

#include "ir/id_ranges.h"
#include "ir/validate.h"

namespace parity::exec {

namespace {
// Uniform in [0, 1) from the top 53 bits: identical on every platform.
double unit(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1p-53; }

ir::TypeMap spec_types(const ir::Spec& spec) {
  ir::DiagList d;
  ir::TypeMap types;
  ir::validate_spec(spec, "", d, &types);
  return types;
}
}  // namespace

std::map<std::string, int64_t> id_ranges(const ir::Spec& spec) {
  return ir::id_ranges(spec, spec_types(spec), spec.dims);
}

Values make_inputs(const ir::Spec& spec, uint64_t seed, DType dtype) {
  ir::TypeMap types = spec_types(spec);
  ir::NegativeIds negative;
  auto ranges = ir::id_ranges(spec, types, spec.dims, &negative);
  std::mt19937_64 g(seed);
  Values out;
  for (const auto& name : spec.graph.inputs) {
    auto it = types.find(name);
    if (it == types.end()) throw ir::InvalidInput("spec input '" + name + "' has no type");
    const ir::TensorType& ty = it->second;
    ir::Tensor<double> t(ir::concrete_shape(ty, spec.dims), 0.0);
    if (ty.dtype == ir::DType::i64) {
      int64_t range = ranges.count(name) ? std::max<int64_t>(ranges[name], 1) : 16;
      if (auto n = negative.find(name); n != negative.end())
        for (auto& v : t.data) v = static_cast<double>(ir::draw_id(0, range, n->second, g));
      else
        for (auto& v : t.data) v = static_cast<double>(g() % static_cast<uint64_t>(range));
    } else if (ty.dtype == ir::DType::i1) {
      for (auto& v : t.data) v = unit(g) < 0.75 ? 1.0 : 0.0;
      if (!t.data.empty()) t.data[0] = 1.0;
    } else {
      // Optimizer state (Adam's second moment, read under a sqrt) is drawn
      // nonnegative, as verify draws it: a negative one makes the spec and
      // the plan NaN alike, and NaN matches NaN, so the update would not be
      // compared at all.
      auto role = spec.roles.find(name);
      const bool state = role != spec.roles.end() && role->second == ir::Role::opt_state;
      for (auto& v : t.data) {
        double x = 2.0 * unit(g) - 1.0;
        if (state) x = std::fabs(x);
        if (dtype == DType::f32) x = static_cast<float>(x);
        if (dtype == DType::bf16) x = round_bf16(static_cast<float>(x));
        v = x;
      }
    }
    out[name] = std::move(t);
  }
  return out;
}

}  // namespace parity::exec
