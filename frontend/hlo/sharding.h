// HLO shardings and replica groups, read from their text and related to the
// mesh: a tiled sharding becomes a placement region whose offsets are linear
// indices over the mesh axes that split each dim; device groups become mesh
// axes where they are exactly the groups along some axes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/plan.h"

namespace parity::frontend::hlo {

struct Sharding {
  enum class Kind { replicated, tiled, maximal, manual, tuple };
  Kind kind = Kind::replicated;
  std::vector<int64_t> tile_dims;  // with the replicated last dim when `last_tile_dim_replicate`
  std::vector<int64_t> devices;    // the tile assignment, row-major over tile_dims
  bool last_tile_dim_replicate = false;
  std::vector<Sharding> tuple;
};

// `{replicated}`, `{devices=[2,1,4]<=[8] last_tile_dim_replicate}`,
// `{devices=[2,2]0,2,1,3}`, `{{replicated}, {...}}`; std::invalid_argument
// with a message otherwise.
Sharding parse_sharding(const std::string& text);

// `[2,4]<=[8]`, `[4,2]<=[2,4]T(1,0)` (iota lists), row-major.
std::vector<int64_t> iota_devices(const std::string& text, std::vector<int64_t>* shape);

// `{{0,1},{2,3}}`, `{}` (every partition), `[2,4]<=[8]`, or
// `mesh['a'=2,'b'=4] {'a'}`; a mesh whose devices are not in iota order is
// written `mesh[...], device_ids=([2,2,2]T(0,2,1)) {'a'}`, which the attribute
// reader splits at the comma: `device_ids` is the part after it.
// std::invalid_argument otherwise.
std::vector<std::vector<int64_t>> parse_replica_groups(const std::string& text, int64_t partitions,
                                                       const std::string& device_ids = "");

// The region of a tensor of `shape` that partition `rank`'s piece is, as
// offsets in `$axis` coordinates; empty when replicated. Throws
// std::invalid_argument naming what is not modeled (uneven tiles, a tile
// order that is no split along mesh axes, manual or maximal shardings).
std::vector<ir::Range> region_of(const Sharding& s, const std::vector<int64_t>& shape,
                                 const ir::Mesh& mesh);

// The tile index of each rank (`tile[rank]`, `count` tiles) as an expression
// of the mesh coordinates: a linear index over some axes (major first), or
// one axis's coordinate shifted cyclically; nullopt when it is neither.
std::optional<ir::DimExpr> tile_index(const ir::Mesh& mesh, const std::vector<int64_t>& tile,
                                      int64_t count);

// Mesh axes, in group order, whose groups (ir::Mesh::group_along) are exactly
// `groups`; nullopt when none are.
std::optional<ir::Strings> axes_of_groups(const std::vector<std::vector<int64_t>>& groups,
                                          const ir::Mesh& mesh);

}  // namespace parity::frontend::hlo
