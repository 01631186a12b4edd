#include "frontend/hlo/hints.h"

#include <cmath>
#include <random>

#include "frontend/hlo/sharding.h"
#include "ir/interp.h"
#include "ir/num_domain.h"

namespace parity::frontend::hlo {

namespace {

using T = ir::Tensor<double>;

bool close(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * (1 + std::fabs(a) + std::fabs(b));
}

// `s`'s box at `off` of `p`'s shape equals `p`.
bool tile_equals(const T& s, const T& p, const std::vector<int64_t>& off) {
  const size_t r = s.shape.size();
  if (r == 0 || p.data.size() != static_cast<size_t>(ir::sem::num_el(p.shape)))
    return r == 0 && !s.data.empty() && !p.data.empty() && close(s.data[0], p.data[0]);
  std::vector<int64_t> st(s.shape.size(), 1);
  for (size_t k = r; k-- > 1;) st[k - 1] = st[k] * s.shape[k];
  std::vector<int64_t> idx(r, 0);
  for (size_t e = 0; e < p.data.size(); ++e) {
    int64_t src = 0;
    for (size_t k = 0; k < r; ++k) src += (idx[k] + off[k]) * st[k];
    if (!close(s.data[static_cast<size_t>(src)], p.data[e])) return false;
    for (size_t k = r; k-- > 0;) {
      if (++idx[k] < p.shape[k]) break;
      idx[k] = 0;
    }
  }
  return true;
}

// A region placement of `p` (one value per rank) on `s`, if its numbers are
// one tile of `s` on every rank, the tile a split along mesh axes.
std::optional<std::vector<ir::Range>> as_region(const ir::Mesh& mesh, const T& s,
                                                const std::vector<T>& p) {
  const size_t rank = s.shape.size();
  if (p[0].shape.size() != rank) return std::nullopt;
  std::vector<int64_t> tiles(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (p[0].shape[d] < 1 || s.shape[d] % p[0].shape[d]) return std::nullopt;
    tiles[d] = s.shape[d] / p[0].shape[d];
  }
  int64_t ntiles = 1;
  for (auto t : tiles) ntiles *= t;
  if (ntiles > 4096) return std::nullopt;
  const int64_t n = mesh.num_ranks();
  std::vector<std::vector<int64_t>> at(rank, std::vector<int64_t>(static_cast<size_t>(n)));
  for (int64_t r = 0; r < n; ++r) {
    const T& v = p[static_cast<size_t>(r)];
    if (v.shape != p[0].shape) return std::nullopt;
    bool hit = false;
    for (int64_t t = 0; t < ntiles && !hit; ++t) {
      std::vector<int64_t> idx(rank), off(rank);
      int64_t rem = t;
      for (size_t d = rank; d-- > 0;) {
        idx[d] = rem % tiles[d];
        rem /= tiles[d];
        off[d] = idx[d] * p[0].shape[d];
      }
      if (tile_equals(s, v, off)) {
        hit = true;
        for (size_t d = 0; d < rank; ++d) at[d][static_cast<size_t>(r)] = idx[d];
      }
    }
    if (!hit) return std::nullopt;
  }
  std::vector<ir::Range> region;
  bool split = false;
  for (size_t d = 0; d < rank; ++d) {
    if (tiles[d] == 1) {
      region.push_back({ir::DimExpr(int64_t{0}), ir::DimExpr(s.shape[d])});
      continue;
    }
    auto e = tile_index(mesh, at[d], tiles[d]);
    if (!e) return std::nullopt;
    split = true;
    region.push_back({*e * ir::DimExpr(p[0].shape[d]), ir::DimExpr(p[0].shape[d])});
  }
  if (!split) region.clear();
  return region;
}

// Mesh axes over which the sum of `p` is `s`, or a tile of it, if some are:
// the partial sums a row-parallel matmul leaves, on a batch split over dp.
std::optional<std::pair<ir::Strings, std::vector<ir::Range>>> as_partial(const ir::Mesh& mesh,
                                                                         const T& s,
                                                                         const std::vector<T>& p) {
  const size_t na = mesh.axes.size();
  for (uint32_t mask = 1; mask < (1u << na); ++mask) {
    ir::Strings axes;
    bool unit = false;
    for (size_t k = 0; k < na; ++k)
      if (mask & (1u << k)) {
        unit |= mesh.axes[k].size < 2;
        axes.push_back(mesh.axes[k].name);
      }
    if (unit) continue;
    // Members that all hold the same numbers are a replica, not addends: a
    // replicated value at 1/n of the spec's is a scale error, not a sum.
    bool differ = false;
    for (int64_t r = 0; r < mesh.num_ranks() && !differ; ++r)
      for (int64_t m : mesh.group_along(r, axes)) {
        const T& x = p[static_cast<size_t>(m)];
        const T& y = p[static_cast<size_t>(r)];
        for (size_t e = 0; e < x.data.size() && e < y.data.size() && !differ; ++e)
          differ = !close(x.data[e], y.data[e]);
      }
    if (!differ) continue;
    std::vector<T> sums(p.size());
    for (int64_t r = 0; r < mesh.num_ranks(); ++r) {
      T& t = sums[static_cast<size_t>(r)];
      t = T(p[static_cast<size_t>(r)].shape, 0.0);
      for (int64_t m : mesh.group_along(r, axes)) {
        const T& x = p[static_cast<size_t>(m)];
        if (x.shape != t.shape) return std::nullopt;
        for (size_t e = 0; e < t.data.size(); ++e) t.data[e] += x.data[e];
      }
    }
    if (auto r = as_region(mesh, s, sums)) return std::make_pair(axes, *r);
  }
  return std::nullopt;
}

}  // namespace

Hints infer_placements(ir::Case& c, const std::map<std::string, std::string>& spec_keys,
                       const std::map<std::string, std::string>& plan_keys,
                       const HintOptions& opt) {
  Hints out;
  std::set<std::string>& placed = out.placed;
  if (!c.spec || c.plan.programs.size() != 1) return out;
  ir::NumDomain<double> d;
  std::mt19937_64 rng(opt.seed);
  // Small positive inputs: logarithms and square roots stay defined, and
  // sums of products stay where tanh and softmax do not saturate (a tile
  // of ones matches every other).
  std::uniform_real_distribution<double> u(0.05, 0.35);
  const ir::Graph& sg = c.spec->graph;
  ir::Bindings sb = c.spec->dims;
  std::map<std::string, T> env;
  size_t bytes = 0;
  for (const auto& in : sg.inputs) {
    std::vector<int64_t> shape;
    try {
      shape = ir::concrete_shape(sg.types.at(in), sb);
    } catch (const std::exception&) {
      return out;
    }
    double elems = 1;
    for (auto d : shape) elems *= static_cast<double>(d);
    if (elems * sizeof(double) + static_cast<double>(bytes) > static_cast<double>(opt.max_bytes)) return out;
    T t(shape, 0.0);
    for (auto& x : t.data) x = u(rng);
    bytes += t.data.size() * sizeof(double);
    env[in] = std::move(t);
  }
  std::map<std::string, T> spec_vals;
  try {
    spec_vals =
        ir::run_graph(d, sg, sb, env, [&](const std::string&, const ir::Instr&, const T& v) {
          bytes += v.data.size() * sizeof(double);
          if (bytes > opt.max_bytes) throw ir::OutOfBudget("hints");
        });
  } catch (const std::exception&) {
    return out;
  }
  // Candidates: spec values by key.
  // Candidates: spec values of the same operation at the same line; for an
  // operation only the plan has (a collective the partitioner inserted), any
  // spec value of that line.
  std::map<std::string, std::vector<std::string>> by_key, by_line;
  for (const auto& [v, k] : spec_keys) {
    by_key[k].push_back(v);
    by_line[k.substr(k.find('@') + 1)].push_back(v);
  }
  auto candidates = [&](const std::string& key) -> const std::vector<std::string>* {
    if (auto it = by_key.find(key); it != by_key.end()) return &it->second;
    if (auto it = by_line.find(key.substr(key.find('@') + 1)); it != by_line.end())
      return &it->second;
    return nullptr;
  };
  const ir::Program& prog = c.plan.programs[0];
  const int64_t n = c.plan.mesh.num_ranks();
  std::map<std::string, std::vector<T>> plan_vals;  // only keyed values
  try {
    ir::PlanRunner<ir::NumDomain<double>> runner(c.plan, d);
    runner.limit_bytes(opt.max_bytes);
    runner.run(
        [&](int64_t r, const ir::Program& p, const std::string& name) -> T {
          for (const auto& pl : c.plan.placements)
            if (pl.program == p.name && pl.value == name && pl.kind == ir::PlacementKind::region) {
              const T& whole = spec_vals.at(pl.spec_value);
              ir::Box box = ir::placement_box(pl, c.plan.rank_bindings(r), whole.shape);
              T t(box.size, 0.0);
              std::vector<int64_t> zero(box.size.size(), 0);
              // Copy the box out of the whole tensor.
              const size_t rk = whole.shape.size();
              std::vector<int64_t> st(rk, 1);
              for (size_t k = rk; k-- > 1;) st[k - 1] = st[k] * whole.shape[k];
              std::vector<int64_t> idx(rk, 0);
              for (size_t e = 0; e < t.data.size(); ++e) {
                int64_t src = 0;
                for (size_t k = 0; k < rk; ++k) src += (idx[k] + box.off[k]) * st[k];
                t.data[e] = whole.data[static_cast<size_t>(src)];
                for (size_t k = rk; k-- > 0;) {
                  if (++idx[k] < t.shape[k]) break;
                  idx[k] = 0;
                }
              }
              return t;
            }
          throw ir::EvalError("plan input " + name + " has no region placement");
        },
        [&](int64_t r, const ir::Program&, const std::string& name, const ir::Instr&, const T& v) {
          if (!plan_keys.count(name)) return;
          auto& slot = plan_vals[name];
          if (slot.empty()) slot.resize(static_cast<size_t>(n));
          slot[static_cast<size_t>(r)] = v;
          runner.charge(v.data.size() * sizeof(double));
        });
  } catch (const std::exception&) {
    return out;
  }
  std::set<std::string> already;
  for (const auto& pl : c.plan.placements) already.insert(pl.value);
  // The given placements of results that hold at the point run.
  std::set<std::string> holding;
  for (const auto& pl : c.plan.placements) {
    auto v = plan_vals.find(pl.value);
    auto sv = spec_vals.find(pl.spec_value);
    if (pl.kind != ir::PlacementKind::region || v == plan_vals.end() || sv == spec_vals.end())
      continue;
    bool all = true;
    for (int64_t r = 0; r < n && all; ++r) {
      const T& x = v->second[static_cast<size_t>(r)];
      ir::Box box = ir::placement_box(pl, c.plan.rank_bindings(r), sv->second.shape);
      all = box.size == x.shape && tile_equals(sv->second, x, box.off);
    }
    if (all) holding.insert(pl.value);
  }
  std::map<std::string, std::string> what;  // placed value -> what it holds
  for (const auto& [name, vals] : plan_vals) {
    if (already.count(name)) continue;
    bool all = true;
    for (const auto& v : vals) all &= !v.shape.empty() || !v.data.empty();
    if (!all) continue;
    const std::vector<std::string>* cand = candidates(plan_keys.at(name));
    if (!cand) continue;
    for (const auto& sv : *cand) {
      auto it = spec_vals.find(sv);
      if (it == spec_vals.end()) continue;
      ir::Placement p;
      p.program = prog.name;
      p.value = name;
      p.spec_value = sv;
      if (auto r = as_region(c.plan.mesh, it->second, vals)) {
        p.region = *r;
      } else if (auto a = as_partial(c.plan.mesh, it->second, vals)) {
        p.kind = ir::PlacementKind::partial;
        p.axes = a->first;
        p.region = a->second;
      } else {
        continue;
      }
      what[name] = p.kind == ir::PlacementKind::partial
                       ? "a partial sum over " + ir::attr_str(p.axes) + " of the spec's " + sv
                       : (p.region.empty() ? "the spec's " + sv : "a tile of the spec's " + sv);
      c.plan.placements.push_back(std::move(p));
      placed.insert(name);
      break;
    }
  }
  // Where the numbers part. A value is good when placed, an input, computed
  // from literals alone, or read (through values not placed) by a placed
  // value: a local all-gather in shard_map code matches no spec value, and
  // the reshape of it does. The culprit is the first operation in program
  // order whose operands are good and whose result is not.
  // (The results' placements are what is to be proved: not evidence.)
  std::set<std::string> good(prog.graph.inputs.begin(), prog.graph.inputs.end());
  good.insert(placed.begin(), placed.end());
  good.insert(holding.begin(), holding.end());
  std::set<std::string> constant;
  for (const auto& op : prog.graph.ops) {
    bool lit = op.kind != "recv";
    for (const auto& o : op.operands) lit &= constant.count(o) > 0;
    if (lit) constant.insert(op.results.begin(), op.results.end());
  }
  good.insert(constant.begin(), constant.end());
  std::set<std::string> feeds;  // read by a placed value
  for (auto op = prog.graph.ops.rbegin(); op != prog.graph.ops.rend(); ++op) {
    bool placed_after = op->results.empty();  // a send: its receiver decides
    for (const auto& r : op->results) placed_after |= good.count(r) > 0 || feeds.count(r) > 0;
    if (placed_after && !op->results.empty())
      feeds.insert(op->operands.begin(), op->operands.end());
  }
  good.insert(feeds.begin(), feeds.end());
  for (const auto& op : prog.graph.ops) {
    bool inputs_good = true;
    for (const auto& o : op.operands) inputs_good &= good.count(o) > 0;
    // A copy holds what its operand holds.
    if (op.kind == "identity" && inputs_good) good.insert(op.results.begin(), op.results.end());
    bool result_good = true;
    for (const auto& r : op.results) result_good &= good.count(r) > 0;
    if (!inputs_good || result_good || op.results.empty()) continue;
    out.culprit = "`" + op.label() + "`";
    std::map<std::string, std::string> origin;  // value -> where its op is written
    for (const auto& d : prog.graph.ops)
      for (const auto& r : d.results)
        if (!d.origin.empty()) origin.emplace(r, d.origin);
    std::string held;
    for (const auto& o : op.operands)
      if (auto w = what.find(o); w != what.end())
        held += (held.empty() ? "" : "; ") + o +
                (origin.count(o) ? " (" + origin.at(o) + ")" : "") + " holds " + w->second;
    if (!held.empty()) out.culprit += " (" + held + ")";
    break;
  }
  return out;
}

}  // namespace parity::frontend::hlo
