#include "ir/mesh.h"

#include <algorithm>

namespace parity::ir {

int64_t Mesh::num_ranks() const {
  int64_t n = 1;
  for (const auto& a : axes) n *= a.size;
  return n;
}

std::optional<size_t> Mesh::axis_index(const std::string& name) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == name) return i;
  return std::nullopt;
}

Coord Mesh::coord_of(int64_t rank) const {
  Coord c(axes.size());
  for (size_t i = axes.size(); i-- > 0;) {
    c[i] = rank % axes[i].size;
    rank /= axes[i].size;
  }
  return c;
}

int64_t Mesh::rank_of(const Coord& c) const {
  int64_t r = 0;
  for (size_t i = 0; i < axes.size(); ++i) r = r * axes[i].size + c[i];
  return r;
}

std::string Mesh::rank_str(int64_t rank) const {
  Coord c = coord_of(rank);
  std::string s = std::to_string(rank) + " (";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? "," : "") + axes[i].name + "=" + std::to_string(c[i]);
  return s + ")";
}

Coord Mesh::off_axes(int64_t rank, const std::vector<std::string>& names) const {
  Coord c = coord_of(rank);
  for (const auto& n : names)
    if (auto i = axis_index(n)) c[*i] = -1;
  return c;
}

std::vector<int64_t> Mesh::group_along(int64_t rank, const std::vector<std::string>& names) const {
  Coord base = coord_of(rank);
  std::vector<size_t> idx;
  for (const auto& n : names)
    if (auto i = axis_index(n)) idx.push_back(*i);
  int64_t count = 1;
  for (size_t i : idx) count *= axes[i].size;
  std::vector<int64_t> out;
  out.reserve(count);
  for (int64_t k = 0; k < count; ++k) {
    Coord c = base;
    int64_t rem = k;
    for (size_t j = idx.size(); j-- > 0;) {
      c[idx[j]] = rem % axes[idx[j]].size;
      rem /= axes[idx[j]].size;
    }
    out.push_back(rank_of(c));
  }
  return out;
}

bool RankSel::contains(const Mesh& m, const Coord& c) const {
  for (const auto& [axis, vals] : fixed) {
    auto i = m.axis_index(axis);
    if (!i) return false;
    if (std::find(vals.begin(), vals.end(), c[*i]) == vals.end()) return false;
  }
  return true;
}

bool operator==(const MeshAxis& a, const MeshAxis& b) { return a.name == b.name && a.size == b.size; }
bool operator==(const Mesh& a, const Mesh& b) { return a.axes == b.axes; }
bool operator==(const RankSel& a, const RankSel& b) { return a.fixed == b.fixed; }

}  // namespace parity::ir
