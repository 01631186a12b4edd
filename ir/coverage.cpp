#include "ir/coverage.h"

#include <algorithm>
#include <functional>
#include <set>
#include <vector>

namespace parity::ir {

namespace {

// Past these, an output's coverage is left to the proved instance: the
// placements of one output enumerated over their coordinates, the distinct
// boxes, and the cells of the grid their edges cut the output into.
constexpr int64_t kMaxBindings = int64_t{1} << 18;
constexpr size_t kMaxBoxes = size_t{1} << 18;
constexpr int64_t kMaxCells = int64_t{1} << 24;

using BoxKey = std::vector<int64_t>;  // offsets, then ends

// Every box `pl` covers in an output of `shape`: one per binding of the `$`
// symbols its region reads (mesh coordinates its program runs on, loop
// indices). False when that is too many or a symbol is unknown.
bool boxes_of(const Plan& p, const Placement& pl, const std::vector<int64_t>& shape, const Bindings& b,
              const std::map<std::string, int64_t>& loops, std::set<BoxKey>& out) {
  std::set<std::string> syms;
  for (const auto& r : pl.region) {
    r.offset.symbols(syms);
    r.size.symbols(syms);
  }
  const Program* prog = p.program(pl.program);
  std::vector<std::pair<std::string, std::vector<int64_t>>> ranges;
  int64_t combos = 1;
  for (const auto& s : syms) {
    if (s.empty() || s[0] != '$') continue;
    const std::string name = s.substr(1);
    std::vector<int64_t> vals;
    if (auto i = p.mesh.axis_index(name)) {
      const int64_t n = p.mesh.axes[*i].size;
      const std::vector<int64_t>* only = nullptr;
      if (prog)
        if (auto f = prog->ranks.fixed.find(name); f != prog->ranks.fixed.end()) only = &f->second;
      if (only) {
        for (int64_t v : *only)
          if (v >= 0 && v < n) vals.push_back(v);
      } else {
        for (int64_t v = 0; v < n; ++v) vals.push_back(v);
      }
    } else if (auto l = loops.find(name); l != loops.end()) {
      for (int64_t v = 0; v < l->second; ++v) vals.push_back(v);
    } else {
      return false;
    }
    if (vals.empty()) return true;  // no rank runs it there
    combos *= static_cast<int64_t>(vals.size());
    if (combos > kMaxBindings) return false;
    ranges.push_back({s, std::move(vals)});
  }
  Bindings rb = b;
  bool ok = true;
  std::function<void(size_t)> rec = [&](size_t k) {
    if (!ok) return;
    if (k < ranges.size()) {
      for (int64_t v : ranges[k].second) {
        rb[ranges[k].first] = v;
        rec(k + 1);
      }
      return;
    }
    BoxKey key(2 * shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t off = 0, size = shape[d];
      if (d < pl.region.size() && (!pl.region[d].offset.try_eval(rb, off) || !pl.region[d].size.try_eval(rb, size))) {
        ok = false;  // reported by the placement checks
        return;
      }
      key[d] = std::clamp<int64_t>(off, 0, shape[d]);
      key[shape.size() + d] = std::clamp<int64_t>(off + size, 0, shape[d]);
    }
    out.insert(std::move(key));
    if (out.size() > kMaxBoxes) ok = false;
  };
  rec(0);
  return ok;
}

std::string index_str(const std::vector<int64_t>& i) {
  std::string s = "[";
  for (size_t k = 0; k < i.size(); ++k) s += (k ? ", " : "") + std::to_string(i[k]);
  return s + "]";
}

}  // namespace

std::optional<CoverageGap> output_coverage_gap(const Plan& p, const Spec& spec, const TypeMap& spec_types,
                                               const Bindings& b,
                                               const std::map<std::string, std::map<std::string, int64_t>>& loops) {
  static const std::map<std::string, int64_t> no_loops;
  std::map<std::string, std::vector<const Placement*>> on;
  for (const auto& pl : p.placements) on[pl.spec_value].push_back(&pl);
  for (const auto& o : spec.graph.outputs) {
    auto t = spec_types.find(o);
    auto placed = on.find(o);
    if (t == spec_types.end() || placed == on.end()) continue;  // reported elsewhere
    std::vector<int64_t> shape;
    bool sized = true;
    for (const auto& e : t->second.shape) {
      int64_t v = 0;
      sized &= e.try_eval(b, v);
      shape.push_back(v);
    }
    if (!sized || std::find(shape.begin(), shape.end(), 0) != shape.end()) continue;
    std::set<BoxKey> boxes;
    bool whole = false, enumerated = true;
    for (const Placement* pl : placed->second) {
      if (pl->region.empty()) {
        whole = true;
        break;
      }
      auto l = loops.find(pl->program);
      enumerated &= boxes_of(p, *pl, shape, b, l == loops.end() ? no_loops : l->second, boxes);
      if (!enumerated) break;
    }
    if (whole || !enumerated) continue;
    // The grid the boxes' edges cut the output into; a cell is covered by a
    // box or by none.
    const size_t rank = shape.size();
    std::vector<std::vector<int64_t>> cuts(rank);
    for (size_t d = 0; d < rank; ++d) cuts[d] = {0, shape[d]};
    for (const auto& k : boxes)
      for (size_t d = 0; d < rank; ++d) {
        cuts[d].push_back(k[d]);
        cuts[d].push_back(k[rank + d]);
      }
    int64_t cells = 1;
    std::vector<int64_t> stride(rank, 1);
    for (size_t d = rank; d-- > 0;) {
      std::sort(cuts[d].begin(), cuts[d].end());
      cuts[d].erase(std::unique(cuts[d].begin(), cuts[d].end()), cuts[d].end());
      stride[d] = cells;
      cells *= static_cast<int64_t>(cuts[d].size()) - 1;
      if (cells > kMaxCells) break;
    }
    if (cells > kMaxCells) continue;
    std::vector<bool> covered(static_cast<size_t>(cells), false);
    int64_t work = 0;
    for (const auto& k : boxes) {
      std::vector<int64_t> lo(rank), hi(rank);
      int64_t n = 1;
      for (size_t d = 0; d < rank; ++d) {
        lo[d] = std::lower_bound(cuts[d].begin(), cuts[d].end(), k[d]) - cuts[d].begin();
        hi[d] = std::lower_bound(cuts[d].begin(), cuts[d].end(), k[rank + d]) - cuts[d].begin();
        n *= hi[d] - lo[d];
      }
      if (n == 0) continue;
      if ((work += n) > 4 * kMaxCells) break;
      std::vector<int64_t> at = lo;
      for (;;) {
        int64_t flat = 0;
        for (size_t d = 0; d < rank; ++d) flat += at[d] * stride[d];
        covered[static_cast<size_t>(flat)] = true;
        size_t d = rank;
        while (d-- > 0) {
          if (++at[d] < hi[d]) break;
          at[d] = lo[d];
        }
        if (d == static_cast<size_t>(-1)) break;
      }
    }
    if (work > 4 * kMaxCells) continue;
    for (int64_t c = 0; c < cells; ++c) {
      if (covered[static_cast<size_t>(c)]) continue;
      std::vector<int64_t> elem(rank);
      int64_t r = c;
      for (size_t d = 0; d < rank; ++d) {
        elem[d] = cuts[d][static_cast<size_t>(r / stride[d])];
        r %= stride[d];
      }
      return CoverageGap{o, "spec output '" + o + "' has elements no placement covers, from " + index_str(elem) +
                                " (" + std::to_string(placed->second.size()) + " placements, " +
                                std::to_string(boxes.size()) +
                                " distinct boxes over the ranks): the plan never produces them"};
    }
  }
  return std::nullopt;
}

}  // namespace parity::ir
