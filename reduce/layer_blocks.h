// Repeated layers: the ops of a spec or program grouped into blocks by the
// layer number their value names carry, and which blocks are exact images of
// the block before them. This is what a layer fold would rest on (the plan
// written out for 126 layers is the same block 126 times); today `parity
// inspect --layers` reports it, so a plan whose layer 77 differs from its
// neighbours shows where before anything is proved.
//
// A layer number is a token `l<digits>` standing alone between separators
// (`l77.attn.q`, `d_l77.out`, `grad.local.l77.wq`). An op whose results carry
// one layer number belongs to the block of the largest number among its
// results, its operands and the blocks of the ops whose unplaced results it
// reads: the backward op named `d_l76.out_1` reads layer 77's values and is
// part of layer 77's backward, and so is `d_l76.out_3 = reduce_mean(d_l76.out_2)`
// after it; a placed value (`d_l76.out`) ends that. Ops whose results carry no
// number, or several (a loop carrying every layer's accumulator, the chain
// summing every parameter's square), are glue.
//
// Block k is an image of block j when, in program order, their ops are the
// same ops with every layer number shifted by k - j: kinds, attributes,
// regions (top level or the same loop body), declared types, operands (glue
// operands identical), and the placements on their results and operands
// (spec: whether a placement targets the value).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/plan.h"

namespace parity::reduce {

struct LayerToken {
  size_t pos = 0, len = 0;  // the digits
  int64_t layer = 0;
};
// The layer numbers in `name`, in order; empty when it carries none.
std::vector<LayerToken> layer_tokens(std::string_view name);
// `name` with every layer number shifted by `by` (numbers that would fall
// below 0 are left as they are: such a name has no image).
std::string shift_layers(std::string_view name, int64_t by);
// Whether `b` is `a` with every layer number shifted by `by` (without building it).
bool is_shifted(std::string_view a, std::string_view b, int64_t by);

struct LayerBlock {
  int64_t layer = 0;
  std::vector<const ir::Op*> ops;       // in program order, loop bodies included
  std::vector<const ir::Graph*> owner;  // per op: the graph (top level or loop body) holding it
  std::vector<int> region;              // per op: 0 top level, k: the k-th loop body met
};

// Why block `layer` is not the image of block `of`.
struct BlockBreak {
  int64_t layer = 0, of = 0;
  const ir::Op* op =
      nullptr;  // the first op of block `layer` that differs; null: the counts differ
  std::string why;
};

// The placements a spec's or program's values carry: a program value's own,
// or for the spec the placements that target the value (views into the case).
using PlacedMap = std::unordered_map<std::string_view, std::vector<const ir::Placement*>>;

struct GraphLayers {
  std::string scope;    // "spec" or "program NAME"
  std::string program;  // empty for the spec
  const ir::Graph* graph = nullptr;
  PlacedMap placed;
  // Spec only: placements of received values (kept apart from `placed`:
  // the receiving program's copy of a value placed by its sender).
  PlacedMap transfers;
  // Each placement's partial ordinal (ir::partial_ordinals, by its index in
  // the case's placements): which partial sum across programs it joins.
  std::shared_ptr<const std::vector<uint32_t>> ordinals;
  const ir::Placement* first_placement = nullptr;
  uint32_t ordinal(const ir::Placement& p) const {
    return ordinals ? (*ordinals)[static_cast<size_t>(&p - first_placement)] : 0;
  }
  // Every name of the graph and its loop bodies, looked up once: its text
  // with the layer numbers taken out (as an id), its layer numbers, its
  // declared type (inputs only: the others follow from the ops compared),
  // its placements and the block of the op defining it.
  struct Name {
    uint32_t base = 0;
    uint8_t count = 0;  // layer numbers; more than 4: compared as text
    int64_t layer[4] = {};
    const ir::TensorType* declared = nullptr;
    const std::vector<const ir::Placement*>* placed = nullptr;
    int64_t block = -1;
  };
  std::unordered_map<std::string_view, Name> names;
  std::unordered_map<const ir::Op*, int64_t> block_of;  // ops in blocks (glue ops are not)
  std::map<int64_t, LayerBlock> blocks;
  size_t glue_ops = 0;
  // Maximal runs of consecutive layers, each block the image of the one before.
  std::vector<std::pair<int64_t, int64_t>> runs;
  std::vector<BlockBreak> breaks;  // one per consecutive pair that is not an image
};

// The blocks of the spec (first, when there is one) and of every program,
// analysed on up to `threads` threads (0: one per hardware thread).
std::vector<GraphLayers> find_layer_blocks(const ir::Case& c, size_t threads = 0);

// Whether block `b` is the image of block `a` of the same spec or program
// under the shift b.layer - a.layer; why not when it is not.
std::optional<BlockBreak> image_break(const GraphLayers& g, const LayerBlock& a,
                                      const LayerBlock& b);

// A few lines per spec and program, for `parity inspect --layers`.
std::string layers_report(const std::vector<GraphLayers>& g);

}  // namespace parity::reduce
