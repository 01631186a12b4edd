// A device mesh with named axes. Ranks are numbered row-major over the axes, so
// an 8192-rank mesh is four numbers, never a list of ranks.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parity::ir {

struct MeshAxis {
  std::string name;
  int64_t size = 1;
};

using Coord = std::vector<int64_t>;  // one entry per mesh axis

struct Mesh {
  std::vector<MeshAxis> axes;

  int64_t num_ranks() const;
  std::optional<size_t> axis_index(const std::string& name) const;
  Coord coord_of(int64_t rank) const;
  int64_t rank_of(const Coord& c) const;
  // `rank 5 (dp=1,tp=1)`
  std::string rank_str(int64_t rank) const;
  // The ranks that share every coordinate of `rank` except those on `axes`,
  // in order of their coordinates on `axes` (so index = position in the group).
  std::vector<int64_t> group_along(int64_t rank, const std::vector<std::string>& axes) const;
  // The key of that group: `rank`'s coordinates with -1 on `axes` (unknown
  // axes ignored). Equal for every member, so a group is built once.
  Coord off_axes(int64_t rank, const std::vector<std::string>& axes) const;
};

// Which coordinates a program runs on: axes absent from `fixed` range over all values.
struct RankSel {
  std::map<std::string, std::vector<int64_t>> fixed;
  bool contains(const Mesh& m, const Coord& c) const;
};

bool operator==(const MeshAxis& a, const MeshAxis& b);
bool operator==(const Mesh& a, const Mesh& b);
bool operator==(const RankSel& a, const RankSel& b);

}  // namespace parity::ir
