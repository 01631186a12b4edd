#include "exec/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "ir/error.h"

namespace parity::exec {

RunOptions control_options(const RunOptions& o) {
  RunOptions c = o;
  c.order = SumOrder::pairwise;
  c.blas = false;
  c.device = Device::cpu;
  return c;
}

RunOptions perturbed_options(const RunOptions& o) {
  RunOptions c = o;
  c.device = Device::cpu;
  c.perturb = true;
  return c;
}

double ulp_distance(double a, double b, DType dtype) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<double>::infinity();
  // Bit patterns mapped to integers that order like the values (-0 == +0).
  auto ord = [&](double x) -> long double {
    switch (dtype) {
      case DType::f64: {
        int64_t i = std::bit_cast<int64_t>(x);
        return i >= 0 ? static_cast<long double>(i)
                      : -static_cast<long double>(i & std::numeric_limits<int64_t>::max());
      }
      case DType::f32: {
        int32_t i = std::bit_cast<int32_t>(static_cast<float>(x));
        return i >= 0 ? i : -static_cast<long double>(i & std::numeric_limits<int32_t>::max());
      }
      case DType::bf16: {
        int32_t i = bf16_bits(static_cast<float>(x));
        return i < 0x8000 ? i : -static_cast<long double>(i & 0x7fff);
      }
    }
    return 0;
  };
  return static_cast<double>(std::fabs(ord(a) - ord(b)));
}

const TensorStats* Comparison::worst() const {
  const TensorStats* w = nullptr;
  for (const auto& t : tensors)
    if (t.elements && (!w || t.worst_ratio > w->worst_ratio)) w = &t;
  return w;
}

namespace {
std::string index_str(const std::string& name, const std::vector<int64_t>& idx) {
  return idx.empty() ? name : fmt::format("{}[{}]", name, fmt::join(idx, ","));
}
}  // namespace

std::string Comparison::summary() const {
  const TensorStats* w = worst();
  int64_t pieces = 0, elements = 0;
  for (const auto& t : tensors) pieces += t.pieces, elements += t.elements;
  if (!w) return "MATCH: nothing to compare (no placed values)";
  std::string where =
      fmt::format("{} from {}: plan {:.9g} vs spec {:.9g} (abs err {:.3g}, tol {:.3g})",
                  index_str(w->spec_value, w->worst_index), w->worst_where, w->worst_plan,
                  w->worst_spec, std::fabs(w->worst_plan - w->worst_spec), w->tol);
  if (match)
    return fmt::format(
        "MATCH: {} values ({} pieces, {} elements) agree with the spec within tolerance; "
        "nearest its tolerance: {}",
        tensors.size(), pieces, elements, where);
  // The first value that differs, in the plan's order, is where to look: the
  // worst is usually downstream of it (a missing allreduce in layer 77 shows
  // most in layer 110).
  int64_t bad = 0;
  const TensorStats* first = nullptr;
  for (const auto& t : tensors)
    if (!t.ok) bad += 1, first = first ? first : &t;
  std::string at_first = fmt::format(
      "{} from {}: plan {:.9g} vs spec {:.9g} (abs err {:.3g}, tol {:.3g})", index_str(first->spec_value, first->worst_index),
      first->worst_where, first->worst_plan, first->worst_spec, std::fabs(first->worst_plan - first->worst_spec),
      first->tol);
  return fmt::format("DIFFERS: {} of {} values exceed their tolerance; first in program order {}{}", bad,
                     tensors.size(), at_first, first == w ? " (also the worst)" : "; worst " + where);
}

namespace {

// A placed value computed from one other placed value carries its rounding
// too, which its own control run need not show: a sum of squares of a
// gradient whose elements the plan rounds 20 ulps off the spec's is off in
// the same direction, while the control's differences cancel. So such a
// value's tolerance is at least twice its source's relative tolerance
// (tolerance over scale), through unplaced spec values, times its own scale
// (a square doubles a relative error). A value of several placed sources
// inherits nothing: a small source's large relative tolerance says little of
// a sum's (a gradient norm missing one parameter's term still differs). Only
// the source's own tolerance is used, so nothing compounds along a chain.
void inherit_tolerances(const ir::Spec& spec, const std::map<std::string, size_t>& index,
                        std::vector<TensorStats>& tensors, const CompareOptions& opt) {
  std::map<std::string, const ir::Op*> producer;
  std::function<void(const ir::Graph&)> index_ops = [&](const ir::Graph& g) {
    for (const auto& op : g.ops) {
      for (const auto& r : op.results) producer[r] = &op;
      for (const auto& b : op.regions) index_ops(b);
    }
  };
  index_ops(spec.graph);
  std::vector<double> own(tensors.size());
  for (size_t k = 0; k < tensors.size(); ++k)
    own[k] = tensors[k].scale > 0 ? tensors[k].tol / tensors[k].scale : 0;
  for (const auto& [name, k] : index) {
    TensorStats& t = tensors[k];
    std::set<size_t> sources;
    std::set<std::string> seen;
    std::vector<std::pair<std::string, int>> work;
    if (auto p = producer.find(name); p != producer.end())
      for (const auto& o : p->second->operands) work.push_back({o, 0});
    while (!work.empty()) {
      auto [v, depth] = work.back();
      work.pop_back();
      if (!seen.insert(v).second) continue;
      if (auto i = index.find(v); i != index.end()) {
        sources.insert(i->second);
        continue;
      }
      auto p = producer.find(v);
      if (p == producer.end() || depth >= 8) continue;
      for (const auto& o : p->second->operands) work.push_back({o, depth + 1});
    }
    if (sources.size() == 1) t.tol = std::max(t.tol, opt.inherit * own[*sources.begin()] * t.scale);
  }
}

}  // namespace

Comparison compare(const ir::Spec& spec, const std::vector<Piece>& pieces,
                   const Values& spec_values, const Values& control, DType dtype,
                   const CompareOptions& opt, const Values* perturbed) {
  Comparison cmp;
  cmp.dtype = dtype;
  cmp.opt = opt;
  std::map<std::string, size_t> index;
  std::map<std::string, std::vector<bool>> covered;
  for (const auto& o : spec.graph.outputs)
    if (auto it = spec_values.find(o); it != spec_values.end())
      covered[o].assign(it->second.data.size(), false);
  const double eps = dtype_epsilon(dtype);
  const double tiny =
      dtype == DType::f64 ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();

  for (const Piece& pc : pieces) {
    auto sv = spec_values.find(pc.spec_value);
    if (sv == spec_values.end())
      throw ir::InvalidInput(fmt::format("{} is placed on '{}', which the spec does not define",
                                         pc.where, pc.spec_value));
    const ir::Tensor<double>& s = sv->second;
    if (pc.value.rank() != s.rank())
      throw ir::InvalidInput(fmt::format("{} has rank {} but spec value '{}' has rank {}", pc.where,
                                         pc.value.rank(), pc.spec_value, s.rank()));
    for (size_t k = 0; k < s.rank(); ++k)
      if (pc.offset[k] < 0 || pc.offset[k] + pc.value.shape[k] > s.shape[k])
        throw ir::InvalidInput(fmt::format("{} at offset [{}] lies outside spec value '{}' [{}]",
                                           pc.where, fmt::join(pc.offset, ","), pc.spec_value,
                                           fmt::join(s.shape, ",")));
    auto [it, fresh] = index.emplace(pc.spec_value, cmp.tensors.size());
    if (fresh) {
      TensorStats t;
      t.spec_value = pc.spec_value;
      t.output = std::find(spec.graph.outputs.begin(), spec.graph.outputs.end(), pc.spec_value) !=
                 spec.graph.outputs.end();
      const ir::Tensor<double>* c =
          control.count(pc.spec_value) ? &control.at(pc.spec_value) : nullptr;
      for (size_t e = 0; e < s.data.size(); ++e) {
        if (std::isfinite(s.data[e])) t.scale = std::max(t.scale, std::fabs(s.data[e]));
        if (c && std::isfinite(s.data[e]) && std::isfinite(c->data[e]))
          t.control = std::max(t.control, std::fabs(s.data[e] - c->data[e]));
      }
      t.tol = std::max({opt.k * t.control, opt.floor_eps * eps * t.scale, tiny});
      if (perturbed && perturbed->count(pc.spec_value)) {
        const ir::Tensor<double>& pv = perturbed->at(pc.spec_value);
        for (size_t e = 0; e < s.data.size() && e < pv.data.size(); ++e)
          if (std::isfinite(s.data[e]) && std::isfinite(pv.data[e]))
            t.perturbed = std::max(t.perturbed, std::fabs(s.data[e] - pv.data[e]));
        t.tol = std::max(t.tol, opt.perturbed_k * t.perturbed);
        if (t.perturbed > opt.cancel_ulps * eps * t.scale) {
          t.cancels = true;
          t.tol = std::max(t.tol, opt.k * t.perturbed);
        }
      }
      cmp.tensors.push_back(t);
    }
  }
  inherit_tolerances(spec, index, cmp.tensors, opt);
  for (const Piece& pc : pieces) {
    const ir::Tensor<double>& s = spec_values.at(pc.spec_value);
    TensorStats& t = cmp.tensors[index.at(pc.spec_value)];
    ++t.pieces;
    auto cov = covered.find(pc.spec_value);
    for (int64_t e = 0; e < pc.value.size(); ++e) {
      auto idx = pc.value.index_of(e);
      for (size_t k = 0; k < idx.size(); ++k) idx[k] += pc.offset[k];
      size_t f = static_cast<size_t>(s.flat(idx));
      if (cov != covered.end()) cov->second[f] = true;
      double p = pc.value.data[static_cast<size_t>(e)], q = s.data[f];
      double err = (std::isnan(p) && std::isnan(q)) || p == q ? 0 : std::fabs(p - q);
      if (std::isnan(err)) err = std::numeric_limits<double>::infinity();  // NaN against a number
      double ratio = err / t.tol;
      ++t.elements;
      t.max_abs = std::max(t.max_abs, err);
      t.max_rel = std::max(t.max_rel, err == 0 ? 0 : err / std::max(std::fabs(q), tiny));
      t.max_ulp = std::max(t.max_ulp, ulp_distance(p, q, dtype));
      if (err > t.tol) t.ok = false;
      if (t.elements == 1 || ratio > t.worst_ratio) {
        t.worst_ratio = ratio;
        t.worst_index = idx;
        t.worst_plan = p, t.worst_spec = q;
        t.worst_where = pc.where;
      }
    }
  }
  for (const auto& [name, bits] : covered)
    for (size_t k = 0; k < bits.size(); ++k)
      if (!bits[k]) {
        ir::Tensor<double> shape_only;
        shape_only.shape = spec_values.at(name).shape;
        throw ir::InvalidInput(fmt::format(
            "spec output element {} is produced by no plan value (placements do not cover it)",
            index_str(name, shape_only.index_of(static_cast<int64_t>(k)))));
      }
  for (const auto& t : cmp.tensors) cmp.match = cmp.match && t.ok;
  return cmp;
}

}  // namespace parity::exec
