#include "ir/plan.h"

#include <algorithm>
#include <map>

namespace parity::ir {

const char* placement_kind_name(PlacementKind k) { return k == PlacementKind::region ? "region" : "partial"; }

const Program* Plan::program(const std::string& n) const {
  for (const auto& p : programs)
    if (p.name == n) return &p;
  return nullptr;
}

const Program* Plan::program_of(int64_t rank) const {
  Coord c = mesh.coord_of(rank);
  for (const auto& p : programs)
    if (p.ranks.contains(mesh, c)) return &p;
  return nullptr;
}

Bindings Plan::rank_bindings(int64_t rank) const {
  Bindings b = dims;
  Coord c = mesh.coord_of(rank);
  for (size_t i = 0; i < mesh.axes.size(); ++i) {
    b[mesh.axes[i].name] = mesh.axes[i].size;
    b["$" + mesh.axes[i].name] = c[i];
  }
  return b;
}

bool operator==(const Range& a, const Range& b) { return a.offset == b.offset && a.size == b.size; }
bool operator==(const Placement& a, const Placement& b) {
  return a.program == b.program && a.value == b.value && a.spec_value == b.spec_value && a.kind == b.kind &&
         a.region == b.region && a.axes == b.axes;
}
bool operator==(const Program& a, const Program& b) {
  return a.name == b.name && a.ranks == b.ranks && a.graph == b.graph;
}
bool operator==(const Plan& a, const Plan& b) {
  return a.name == b.name && a.mesh == b.mesh && a.dims == b.dims && a.programs == b.programs &&
         a.placements == b.placements;
}
bool operator==(const Case& a, const Case& b) { return a.spec == b.spec && a.plan == b.plan; }

Box placement_box(const Placement& p, const Bindings& b, const std::vector<int64_t>& shape) {
  Box box{std::vector<int64_t>(shape.size(), 0), shape};
  for (size_t k = 0; k < p.region.size() && k < shape.size(); ++k) {
    box.off[k] = p.region[k].offset.eval(b);
    box.size[k] = p.region[k].size.eval(b);
  }
  return box;
}

std::string partial_sum_key(const std::string& program, const Placement& pl) {
  Strings axes = pl.axes;
  std::sort(axes.begin(), axes.end());
  std::string key = program + '\n' + pl.spec_value + '\n';
  for (const auto& a : axes) key += a + ',';
  for (const auto& r : pl.region) key += '\n' + r.offset.str() + ':' + r.size.str();
  return key;
}

std::vector<uint32_t> partial_ordinals(const Plan& p) {
  std::vector<uint32_t> out(p.placements.size(), 0);
  std::map<std::string, uint32_t> seen;  // partial_sum_key -> count
  for (size_t k = 0; k < p.placements.size(); ++k) {
    const Placement& pl = p.placements[k];
    if (pl.kind == PlacementKind::partial) out[k] = seen[partial_sum_key(pl.program, pl)]++;
  }
  return out;
}

}  // namespace parity::ir
