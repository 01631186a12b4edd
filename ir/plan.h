// The Plan: a mesh and the programs its ranks run, with placements that relate
// plan tensors to spec tensors (lineage).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/mesh.h"
#include "ir/spec.h"

namespace parity::ir {

// A program runs on every rank its selector matches; it may read its own
// coordinate as `$axis` in attributes (SPMD). A plan given per rank (MPMD) uses
// one program per fixed coordinate.
struct Program {
  std::string name;
  RankSel ranks;
  Graph graph;
  int line = 0, col = 0;  // where it is written in a text file; 0 when unknown
};

// One dim of a region: elements [offset, offset+size) of the spec tensor.
struct Range {
  DimExpr offset;
  DimExpr size;
};

enum class PlacementKind {
  region,   // the plan value equals this region of the spec value (full region: a replica)
  partial,  // the sum of the plan value over the ranks along `axes` equals the region
};
const char* placement_kind_name(PlacementKind k);

struct Placement {
  std::string program;
  std::string value;  // a value of that program (input, output or intermediate)
  std::string spec_value;
  PlacementKind kind = PlacementKind::region;
  std::vector<Range> region;  // empty: the whole spec tensor
  Strings axes;               // for partial: the mesh axes summed over
  int line = 0, col = 0;      // where it is written in a text file; 0 when unknown
};

// The box a placement covers in its spec tensor (of concrete `shape`) under
// one instance's bindings: the whole tensor when the region is empty.
struct Box {
  std::vector<int64_t> off, size;
};
Box placement_box(const Placement& p, const Bindings& b, const std::vector<int64_t>& shape);

struct Plan;
// Which sum each partial placement belongs to, among a program's partial
// placements of one spec value with the same axes and region (as written):
// 0 for the first, 1 for the next, ... (0 for region placements). The
// addends of one partial sum are the values of equal ordinal on the ranks
// along its axes: two values of one program placed as partials of the same
// region are two sums, not one (and in a plan given per rank, the k-th such
// placement of each program pairs with the k-th of the others).
std::vector<uint32_t> partial_ordinals(const Plan& p);
// What `partial_ordinals` counts by: `pl`'s spec value, sorted axes and
// region as written, were it placed by `program`.
std::string partial_sum_key(const std::string& program, const Placement& pl);

struct Plan {
  std::string name;
  Mesh mesh;
  Bindings dims;
  std::vector<Program> programs;
  std::vector<Placement> placements;

  const Program* program(const std::string& name) const;
  // The program a rank runs, or nullptr when the rank is idle.
  const Program* program_of(int64_t rank) const;
  // Bindings for one rank: dims, axis sizes by name, coordinates as `$axis`.
  Bindings rank_bindings(int64_t rank) const;
};

// A complete case: a plan and (usually) the spec it claims to implement.
struct Case {
  std::optional<Spec> spec;
  Plan plan;
};

bool operator==(const Range& a, const Range& b);
bool operator==(const Placement& a, const Placement& b);
bool operator==(const Program& a, const Program& b);
bool operator==(const Plan& a, const Plan& b);
bool operator==(const Case& a, const Case& b);

}  // namespace parity::ir
