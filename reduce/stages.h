// Stages: the plan cut at its placements. Every placed value instance (one
// value, one rank, one loop iteration) is proved in the stage of the spec value
// it is placed on, assuming the placements of the placed instances it reads.
// A stage's canonical key (ops, evaluated attributes, shapes, regions, ranks
// renumbered by first use, values renamed by position) identifies identical
// stages, e.g. the same layer on another pipeline stage, so each distinct stage
// is proved once. The argument is in docs/soundness.md.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "ir/interp.h"
#include "ir/plan.h"
#include "ir/validate.h"

namespace parity::reduce {

// One value instance: a program value on one rank in one iteration, or a spec
// value (rank -1).
struct Node {
  int32_t rank = -1;
  int32_t instr = -1;   // index into the unrolled code of the rank's program (spec: the spec's); -1: an input
  int32_t result = 0;   // which result of the op
  const std::string* name = nullptr;  // the value's name, owned by the case or the graph's code
  // Operands; a collective's are every member's operand, in group order (one
  // list shared by the members); a recv's the sent value. Owned by the graph.
  std::span<const int32_t> deps;
  int32_t coll = -1;          // collective instance, shared by its members
  int32_t member = 0;         // position in the group
  std::span<const uint32_t> placements;  // placements of this instance (owned by the graph)
};

struct Obligation {
  uint32_t placement;           // of the first member
  std::vector<int32_t> members;  // plan nodes whose sum (partial) or value (region) equals the region
};

// An instruction's attributes as stage-key text, with the expressions that
// are evaluated per instance inserted at their positions (most have none).
struct AttrKey {
  std::string text;
  std::shared_ptr<const std::vector<std::pair<size_t, ir::DimExpr>>> exprs;  // shared by the op's iterations
};

struct Stage {
  std::string spec_value;
  int32_t spec_node = -1;
  std::vector<int32_t> spec_nodes;   // spec ops to run, in order
  std::vector<int32_t> spec_inputs;  // spec nodes seeded with fresh values
  std::vector<int32_t> plan_nodes;   // plan ops to run, in dependence order
  std::vector<int32_t> plan_inputs;  // placed plan nodes seeded from their placements
  std::vector<Obligation> obligations;
  // The canonical key, interned by the graph: stages with equal keys share
  // one string, so pointers compare keys.
  const std::string* key = nullptr;
};

// Placements as (program, value), and the open spec values of a layer fold
// with the received copies their stages prove (StageGraph's constructor).
using PlacedValues = std::set<std::pair<std::string, std::string>>;
using OpenStages = std::map<std::string, PlacedValues>;

class StageGraph {
 public:
  // `c` must be validated. Throws ir::EvalError when the case has a shape the
  // stage builder does not handle (the caller verifies without stages).
  // Stages are sliced on up to `threads` threads (0: one per hardware thread).
  // `spec_types`: the spec's value types when the caller validated it already.
  // Past `max_rank_instructions` (summed over ranks) the graph stops before
  // laying out its nodes: it has no stages, only rank_instructions().
  // `assumed`: spec values whose stages are not built (a layer fold proves
  // them as images of kept ones); they still cut the stages that read them.
  // `open`: of those, values whose stage is built with the spec value itself
  // free (a fresh input), proving only the placements of the (program, value)
  // pairs listed: a value received from a stage whose layer was folded away.
  explicit StageGraph(const ir::Case& c, size_t threads = 0, const ir::TypeMap* spec_types = nullptr,
                      size_t max_rank_instructions = SIZE_MAX,
                      const std::set<std::string>* assumed = nullptr,
                      const OpenStages* open = nullptr);
  ~StageGraph();

  const ir::Case& kase() const { return c_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Stage>& stages() const { return stages_; }
  const ir::Instr& instr(const Node& n) const;
  // Dims, rank coordinates and loop indices for evaluating an instance.
  const ir::Bindings& bindings(const Node& n) const;
  size_t rank_instructions() const { return rank_instructions_; }
  // Plan instances placed on each spec value.
  const std::map<std::string, std::vector<int32_t>>& placed_on() const { return placed_on_; }
  const ir::TypeMap& spec_types() const { return spec_types_; }
  const ir::Bindings& dims() const { return dims_; }

  // Which of its program's partial placements of one region a placement is
  // (ir::partial_ordinals): the addends of one sum share it.
  uint32_t partial_ordinal(uint32_t placement) const { return partial_ordinal_[placement]; }

 private:
  void build_nodes();
  void build_spec_nodes();
  void build_stages();
  // The stage of spec value `y` (node `sid`), or none when nothing is placed on it.
  // `only`: the stage of an open spec value (see the constructor).
  std::optional<Stage> make_stage(int32_t sid, const std::string& y,
                                  const PlacedValues* only = nullptr) const;
  // Writes the canonical key of `s` into `k` (cleared first).
  void key_of(const Stage& s, std::string& k) const;
  const std::string* intern(const std::string& k) const;
  void attrs_key(std::string& k, const Node& n) const;

  const ir::Case& c_;
  ir::Bindings dims_;
  // A program's unrolled code, with what every rank running it shares.
  struct Code {
    std::vector<ir::Instr> instrs;
    std::vector<int32_t> iter;                      // instr -> index of its loop iteration
    std::vector<ir::Bindings> iter_loop;            // iteration -> its loop indices
    std::vector<AttrKey> attrs;  // instr -> its attribute key
  };
  std::map<std::string, Code> code_;           // program name ->
  std::vector<const Code*> code_of_;           // rank ->
  std::vector<std::vector<ir::Bindings>> rank_iter_;  // rank -> iteration -> bindings
  std::vector<ir::Instr> spec_code_;
  std::vector<AttrKey> spec_attrs_;  // as Code::attrs (all text: the spec is straight-line)
  std::vector<const ir::Program*> prog_of_;
  std::vector<ir::Bindings> rank_base_;  // dims, axis sizes and coordinates of each rank
  // The `$` symbols alone (coordinates, loop indices), for the expressions
  // stage keys bind the dims of beforehand: fewer entries to search.
  std::vector<ir::Bindings> rank_coords_;
  std::vector<std::vector<ir::Bindings>> rank_iter_coords_;
  const ir::Bindings& coords(const Node& n) const;
  std::vector<Node> nodes_;
  std::map<std::string, int32_t> spec_node_of_;  // spec value -> node
  // Looked up once, not per stage: whether a spec node is a placed value (a
  // stage boundary), its type's key text, and each placement's spec node.
  std::vector<char> cut_;
  std::vector<std::string> spec_type_key_;
  std::vector<int32_t> placement_spec_node_;
  // Each placement's region and axes as key text, when no offset or size
  // reads a coordinate or loop index (the same for every instance).
  std::vector<std::optional<std::string>> placement_region_key_;
  std::vector<uint32_t> partial_ordinal_;  // ir::partial_ordinals
  // Otherwise its region with the dims and axis sizes bound (`ir::DimExpr::bind`).
  std::vector<std::vector<ir::Range>> placement_region_;
  // Placements whose bound regions are the same expressions on the same axes
  // share a class: a class's key text at one instance's coordinates (a
  // binding owned by this graph) is evaluated once per thread and reused.
  std::vector<uint32_t> placement_region_class_;
  struct RegionMemo;  // one per keying thread, owned by the graph
  mutable std::mutex memos_mutex_;
  mutable std::map<std::thread::id, std::unique_ptr<RegionMemo>> memos_;
  RegionMemo& memo() const;
  void append_region(std::string& k, RegionMemo& memo, uint32_t placement,
                     const ir::Bindings& coords) const;
  std::map<std::string, std::vector<int32_t>> placed_on_;  // spec value -> plan nodes placed on it
  // Operand lists: each rank's in one array (filled on its own thread), the
  // spec's, receives' and collectives' kept whole.
  std::vector<std::vector<int32_t>> rank_deps_;
  std::deque<std::vector<int32_t>> dep_lists_;
  std::span<const int32_t> keep_deps(std::vector<int32_t> deps);
  // Program -> value -> its placements; shared by every rank's node of it.
  std::map<std::string, std::unordered_map<std::string, std::vector<uint32_t>>> placements_of_;
  std::vector<Stage> stages_;
  mutable std::mutex keys_mutex_;
  mutable std::unordered_set<std::string> keys_;  // the distinct stage keys
  size_t rank_instructions_ = 0;
  size_t collectives_ = 0;  // collective instances
  size_t threads_ = 0;
  size_t max_rank_instructions_ = SIZE_MAX;
  const std::set<std::string>* assumed_ = nullptr;
  const OpenStages* open_ = nullptr;
  ir::TypeMap spec_types_;
};

}  // namespace parity::reduce
