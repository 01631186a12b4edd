#include "reduce/layer_fold.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/op_registry.h"
#include "ir/parallel.h"
#include "reduce/layer_blocks.h"

namespace parity::reduce {

namespace {

// A condition of the fold that does not hold: the case is not folded.
struct Refused {
  std::string why;
};

struct Def {
  enum Kind { input, result, body_input, loop_result } kind = input;
  const ir::Op* op = nullptr;  // the producer, or the loop
  size_t index = 0;            // which result, or which carried slot
};

// The layer a name carries when all its layer numbers agree.
std::optional<int64_t> single_layer(std::string_view n) {
  auto t = layer_tokens(n);
  if (t.empty()) return std::nullopt;
  for (const auto& x : t)
    if (x.layer != t[0].layer) return std::nullopt;
  return t[0].layer;
}

bool communicates(const ir::Op& op) {
  const ir::OpDef* d = ir::OpRegistry::get().find(op.kind);
  return !d || d->collective || d->p2p;
}

// The fold of one spec or program: its conditions, then its folded graph.
class ScopeFold {
 public:
  ScopeFold(const GraphLayers& gl, const std::map<int64_t, int64_t>& rep, const ir::TypeMap& types)
      : gl_(gl), rep_(rep), types_(types) {}

  // Every op of a dropped layer reads only values of its own layer (its ops
  // and its loop-carried slots), placed values, inputs, or values computed
  // from none of any layer's: its cone ends in its layer.
  void check_cones() {
    index(*gl_.graph, true);  // here: each scope on its own thread
    for (const auto& [l, r] : rep_) {
      auto it = gl_.blocks.find(l);
      if (it == gl_.blocks.end()) continue;
      for (const ir::Op* op : it->second.ops)
        for (const auto& w : op->operands) check_read(*op, w, l);
    }
    // A dropped layer's loop slot is checked whether or not an op reads it:
    // a slot only placed (a gradient accumulated into a value nothing reads)
    // is dropped with its layer, so it must be the image of the
    // representative's.
    for (const auto& [w, d] : def_)
      if (d.kind == Def::body_input || d.kind == Def::loop_result)
        if (auto l = slot_layer(*d.op, d.index); l && rep_.count(*l))
          check_slot_image(*d.op, d.index, *l);
    // Every placement on a dropped layer's value has its image on the
    // representative's (values no op of the block reads, a loop result,
    // are not compared with the ops).
    for (const auto& [v, ps] : gl_.placed) {
      auto l = layer_of(v);
      if (!l || !rep_.count(*l)) continue;
      const int64_t by = rep_.at(*l) - *l;
      const std::string image = shift_layers(v, by);
      auto it = gl_.placed.find(image);
      bool same = it != gl_.placed.end() && it->second.size() == ps.size();
      for (size_t k = 0; same && !gl_.program.empty() && k < ps.size(); ++k) {
        const ir::Placement& a = *ps[k];
        const ir::Placement& b = *it->second[k];
        same = a.kind == b.kind && a.axes == b.axes && a.region.size() == b.region.size() &&
               gl_.ordinal(a) == gl_.ordinal(b) && is_shifted(a.spec_value, b.spec_value, by);
        for (size_t d = 0; same && d < a.region.size(); ++d)
          same = a.region[d].offset == b.region[d].offset && a.region[d].size == b.region[d].size;
      }
      if (!same)
        throw Refused{gl_.scope + ": the placements of '" + std::string(v) + "' (layer " +
                      std::to_string(*l) + ") are not the image of those of '" + image + "'"};
    }
  }

  // The layer a value belongs to: its op's block, its loop slot's layer, or
  // (an input) the one layer number it carries.
  std::optional<int64_t> layer_of(std::string_view w) const {
    auto it = def_.find(w);
    if (it == def_.end()) return std::nullopt;
    const Def& d = it->second;
    switch (d.kind) {
      case Def::input:
        return single_layer(w);
      case Def::result:
        return block(d.op);
      default:
        return slot_layer(*d.op, d.index);
    }
  }

  // Whether a value belongs to a dropped layer: a result of its ops, one of
  // its loop-carried slots, or an input carrying its number.
  bool of_dropped(std::string_view w) const {
    auto it = def_.find(w);
    if (it == def_.end()) return false;
    const Def& d = it->second;
    switch (d.kind) {
      case Def::input: {
        auto l = single_layer(w);
        return l && rep_.count(*l);
      }
      case Def::result:
        return dropped_op(d.op);
      default:
        return dropped_slot(*d.op, d.index);
    }
  }

  // Which ops of dropped layers kept ops still need (read through unplaced
  // values: the gradient-norm sum reads every layer's sum of squares), and
  // which placed values of removed ops kept ops read (they become stubs).
  void plan() {
    std::vector<const ir::Op*> work;
    std::function<void(const ir::Graph&)> seed = [&](const ir::Graph& g) {
      for (const auto& op : g.ops) {
        if (!dropped_op(&op)) work.push_back(&op);
        for (const auto& b : op.regions) seed(b);
      }
    };
    seed(*gl_.graph);
    auto read = [&](const std::string& w, const ir::Op& by) {
      auto it = def_.find(w);
      if (it == def_.end()) return;
      const Def& d = it->second;
      if (d.kind == Def::result) {
        if (!dropped_op(d.op) || retained_.count(d.op)) return;
        if (placed(w)) {
          stubs_.insert(w);
          return;
        }
        retained_.insert(d.op);
        work.push_back(d.op);
        return;
      }
      if (d.kind != Def::input && dropped_slot(*d.op, d.index))
        throw Refused{gl_.scope + ": `" + by.label() + "` reads '" + w +
                      "', carried by the loop for a layer that would be dropped"};
    };
    while (!work.empty()) {
      const ir::Op* op = work.back();
      work.pop_back();
      if (op->regions.empty()) {
        for (const auto& w : op->operands) read(w, *op);
        continue;
      }
      const ir::Graph& body = op->regions[0];
      for (size_t k = 0; k < op->operands.size() && k < body.outputs.size(); ++k)
        if (!dropped_slot(*op, k)) {
          read(op->operands[k], *op);
          read(body.outputs[k], *op);
        }
    }
    // A stub is not needed where its producer was kept after all.
    for (auto it = stubs_.begin(); it != stubs_.end();) {
      const Def& d = def_.at(*it);
      it = retained_.count(d.op) ? stubs_.erase(it) : std::next(it);
    }
  }

  // The folded graph (inputs and outputs filtered by the caller).
  ir::Graph rebuild(const ir::Graph& g) const {
    ir::Graph out;
    out.inputs = g.inputs;
    out.outputs = g.outputs;
    // Inputs must be declared; the other types were checked on the instance
    // folded and are inferred again from the same operands.
    for (const auto& in : g.inputs)
      if (auto it = g.types.find(in); it != g.types.end()) out.types.insert(*it);
    for (const auto& op : g.ops) {
      if (removed(&op)) {
        for (const auto& r : op.results)
          if (stubs_.count(r)) out.ops.push_back(stub(r, op.line));
        continue;
      }
      if (op.regions.empty()) {
        out.ops.push_back(op);
        continue;
      }
      ir::Op loop;
      loop.kind = op.kind;
      loop.attrs = op.attrs;
      loop.line = op.line;
      const ir::Graph& body = op.regions[0];
      ir::Graph nb = rebuild(body);
      nb.inputs.clear();
      nb.outputs.clear();
      for (size_t k = 0; k < op.operands.size(); ++k) {
        if (dropped_slot(op, k)) continue;
        loop.operands.push_back(op.operands[k]);
        loop.results.push_back(op.results[k]);
        nb.inputs.push_back(body.inputs[k]);
        nb.outputs.push_back(body.outputs[k]);
      }
      loop.regions.push_back(std::move(nb));
      out.ops.push_back(std::move(loop));
    }
    return out;
  }

  // Whether the folded graph still defines `w` (an input is the caller's to drop).
  bool kept(std::string_view w) const {
    auto it = def_.find(w);
    if (it == def_.end()) return false;
    const Def& d = it->second;
    if (d.kind == Def::input) return true;
    if (d.kind == Def::result) return !removed(d.op) || stubs_.count(std::string(w));
    return !dropped_slot(*d.op, d.index);
  }

  size_t stubs() const { return stubs_.size(); }
  ir::Op make_stub(const std::string& r, int line) const { return stub(r, line); }
  const std::set<std::string>& stub_names() const { return stubs_; }

  // Whether `w` is the result of a `recv`.
  bool received(std::string_view w) const {
    auto it = def_.find(w);
    return it != def_.end() && it->second.kind == Def::result && it->second.op->kind == "recv";
  }

 private:
  const GraphLayers& gl_;
  const std::map<int64_t, int64_t>& rep_;  // dropped layer -> its representative
  const ir::TypeMap& types_;
  std::unordered_map<std::string_view, Def> def_;
  std::unordered_map<std::string_view, bool> free_;
  std::set<std::pair<const ir::Op*, size_t>> slot_checked_;
  std::unordered_set<const ir::Op*> retained_;
  std::set<std::string> stubs_;

  void index(const ir::Graph& g, bool top) {
    if (top)
      for (const auto& in : g.inputs) def_[in] = Def{Def::input, nullptr, 0};
    for (const auto& op : g.ops) {
      for (size_t k = 0; k < op.results.size(); ++k)
        def_[op.results[k]] = Def{op.regions.empty() ? Def::result : Def::loop_result, &op, k};
      for (const auto& body : op.regions) {
        for (size_t k = 0; k < body.inputs.size(); ++k)
          def_[body.inputs[k]] = Def{Def::body_input, &op, k};
        index(body, false);
      }
    }
  }

  bool placed(std::string_view w) const { return gl_.placed.count(w) > 0; }
  // A value whose name carries no layer number is read under that same name
  // by a layer and its images, so it must stand for no one layer: placed only
  // on spec values without a layer number (a received activation `act.in`
  // placed on `l6.out`, or a weight `w_shared` placed on `l1.w`, is layer 6's
  // or layer 1's, and a dropped layer reading it is not its kept image).
  bool neutral(std::string_view w) const {
    if (!layer_tokens(w).empty()) return false;
    if (auto it = gl_.placed.find(w); it != gl_.placed.end())
      for (const ir::Placement* p : it->second)
        if (!layer_tokens(p->spec_value).empty()) return false;
    return true;
  }
  // A placed value a layer may read: of a layer (its name shifts with the
  // layer's image), or neutral.
  bool placed_read(std::string_view w) const {
    return placed(w) && (!layer_tokens(w).empty() || neutral(w));
  }

  std::optional<int64_t> block(const ir::Op* op) const {
    auto it = gl_.block_of.find(op);
    if (it == gl_.block_of.end()) return std::nullopt;
    return it->second;
  }
  bool dropped_op(const ir::Op* op) const {
    auto b = block(op);
    return b && rep_.count(*b);
  }
  bool removed(const ir::Op* op) const { return dropped_op(op) && !retained_.count(op); }

  // The layer of a loop-carried slot: its operand, body argument, body
  // result and loop result all carry that one layer number.
  std::optional<int64_t> slot_layer(const ir::Op& loop, size_t k) const {
    if (loop.regions.empty()) return std::nullopt;
    const ir::Graph& body = loop.regions[0];
    if (k >= loop.operands.size() || k >= loop.results.size() || k >= body.inputs.size() ||
        k >= body.outputs.size())
      return std::nullopt;
    auto l = single_layer(loop.results[k]);
    if (!l) return std::nullopt;
    for (const std::string* n : {&loop.operands[k], &body.inputs[k], &body.outputs[k]})
      if (single_layer(*n) != l) return std::nullopt;
    return l;
  }
  bool dropped_slot(const ir::Op& loop, size_t k) const {
    auto l = slot_layer(loop, k);
    return l && rep_.count(*l);
  }

  // Values computed from inputs and placed values only, through no op of a
  // layer and no communication: the same values for every layer that reads them.
  bool layer_free(std::string_view w, int depth = 0) {
    if (placed(w)) return neutral(w);
    if (auto it = free_.find(w); it != free_.end()) return it->second;
    if (depth > 4096) return false;
    auto it = def_.find(w);
    if (it == def_.end()) return false;
    const Def& d = it->second;
    bool r = false;
    if (d.kind == Def::input) {
      r = neutral(w);
    } else if (d.kind == Def::result && !block(d.op) && !communicates(*d.op)) {
      r = true;
      for (const auto& o : d.op->operands)
        if (!layer_free(o, depth + 1)) {
          r = false;
          break;
        }
    }
    free_[w] = r;
    return r;
  }

  void check_read(const ir::Op& op, const std::string& w, int64_t l) {
    auto it = def_.find(w);
    if (it == def_.end()) throw Refused{gl_.scope + ": '" + w + "' is not defined"};
    const Def& d = it->second;
    switch (d.kind) {
      case Def::input:
        if (!layer_tokens(w).empty() || neutral(w)) return;
        break;
      case Def::result:
        // A value computed without layers is the same value for the image
        // only if its name carries no layer number (the image reads the same
        // name) and it comes from no one layer's values.
        if (block(d.op) == l || placed_read(w) || (layer_tokens(w).empty() && layer_free(w)))
          return;
        break;
      case Def::body_input:
      case Def::loop_result:
        if (slot_layer(*d.op, d.index) == l) {
          check_slot_image(*d.op, d.index, l);
          return;
        }
        if (placed_read(w)) return;
        break;
    }
    throw Refused{gl_.scope + ": `" + op.label() + "` of layer " + std::to_string(l) + " reads '" +
                  w +
                  "', which is not of its layer and not computed without any one layer's values "
                  "(inputs and placed values without a layer number, on spec values without one)"};
  }

  // The representative layer carries the image of the slot in the same loop.
  void check_slot_image(const ir::Op& loop, size_t k, int64_t l) {
    if (!slot_checked_.insert({&loop, k}).second) return;
    const int64_t by = rep_.at(l) - l;
    const ir::Graph& body = loop.regions[0];
    // What the slot carries comes from the layer's own ops (its first value
    // and each iteration's), so the cone through it stays in the layer.
    for (const std::string* n : {&loop.operands[k], &body.outputs[k]}) {
      auto it = def_.find(*n);
      const bool own =
          it != def_.end() && (it->second.kind == Def::input ||
                               (it->second.kind == Def::result && block(it->second.op) == l));
      if (!own && !placed(*n))
        throw Refused{gl_.scope + ": the loop slot of '" + body.inputs[k] + "' carries '" + *n +
                      "', which is not computed by its layer"};
    }
    const std::string want = shift_layers(body.inputs[k], by);
    for (size_t j = 0; j < body.inputs.size(); ++j)
      if (body.inputs[j] == want) {
        if (loop.operands[j] == shift_layers(loop.operands[k], by) &&
            body.outputs[j] == shift_layers(body.outputs[k], by) &&
            loop.results[j] == shift_layers(loop.results[k], by))
          return;
        break;
      }
    throw Refused{gl_.scope + ": the loop slot of '" + body.inputs[k] + "' has no image in layer " +
                  std::to_string(rep_.at(l))};
  }

  ir::Op stub(const std::string& r, int line) const {
    auto it = types_.find(r);
    if (it == types_.end()) throw Refused{gl_.scope + ": no type for '" + r + "'"};
    ir::Op op;
    op.kind = "fill";
    op.results = {r};
    op.attrs["value"] = 0.0;
    op.attrs["shape"] = ir::Dims(it->second.shape);
    if (it->second.dtype != ir::DType::f32)
      op.attrs["dtype"] = std::string(ir::dtype_name(it->second.dtype));
    op.line = line;
    return op;
  }
};

// Whether `op` sends or receives, itself or in a loop body it holds.
bool has_p2p(const ir::Op& op) {
  const ir::OpDef* d = ir::OpRegistry::get().find(op.kind);
  if (!d || d->p2p) return true;
  for (const auto& b : op.regions)
    for (const auto& o : b.ops)
      if (has_p2p(o)) return true;
  return false;
}

// Per graph (top level and every loop body): for each op, how many ops
// before it in that graph send or receive (a loop holding one counts): ops
// with the same number run with no point-to-point op between them.
using Segments = std::unordered_map<const ir::Graph*, std::vector<int>>;
void p2p_segments(const ir::Graph& g, Segments& out) {
  std::vector<int>& seg = out[&g];
  int n = 0;
  for (const auto& op : g.ops) {
    seg.push_back(n);
    if (has_p2p(op)) ++n;
    for (const auto& b : op.regions) p2p_segments(b, out);
  }
}

// The dropped layers and their representatives: a layer is dropped when, in
// every spec and program that has it, it lies in a run of images after the
// run's first layer, exchanges no unplaced value with a send or receive, and
// its collectives run over mesh axes no program selector reads (so every
// member of a group runs the same program, and the same block); its
// representative is the latest of those first layers (kept everywhere, in
// every run). Each collective of a
// dropped layer must also run in the same graph as its image in the
// representative with no send or receive between them, so that the folded
// case's schedule decides the whole one's (docs/soundness.md, "Layer fold").
std::map<int64_t, int64_t> choose(const ir::Case& c, const std::vector<GraphLayers>& gs) {
  std::set<std::string> selected;  // axes some program's selector reads
  for (const auto& p : c.plan.programs)
    for (const auto& [axis, vals] : p.ranks.fixed) selected.insert(axis);
  // Sends and receives are glue, kept whole; a layer that exchanges
  // unplaced values with them (ring attention's key and value chunks) is
  // kept with them: only placed values are seeded where a cone stops.
  std::set<int64_t> p2p_bound;
  for (const auto& g : gs) {
    if (g.program.empty()) continue;
    std::set<std::string_view> unplaced_recv;
    std::function<void(const ir::Graph&)> walk = [&](const ir::Graph& gr) {
      for (const auto& op : gr.ops) {
        for (const auto& b : op.regions) walk(b);
        const ir::OpDef* d = ir::OpRegistry::get().find(op.kind);
        if (d && !d->p2p) continue;
        for (const auto& w : op.operands) {
          auto it = g.names.find(w);
          if (!g.placed.count(w) && it != g.names.end() && it->second.block >= 0)
            p2p_bound.insert(it->second.block);
        }
        for (const auto& r : op.results)
          if (!g.placed.count(r)) unplaced_recv.insert(r);
      }
    };
    walk(*g.graph);
    if (unplaced_recv.empty()) continue;
    for (const auto& [l, b] : g.blocks)
      for (const ir::Op* op : b.ops)
        for (const auto& w : op->operands)
          if (unplaced_recv.count(w)) p2p_bound.insert(l);
  }
  std::set<int64_t> all;
  for (const auto& g : gs)
    for (const auto& [l, b] : g.blocks) all.insert(l);
  std::map<int64_t, int64_t> rep;
  for (int64_t l : all) {
    bool ok = !p2p_bound.count(l);
    int64_t r = -1;
    for (const auto& g : gs) {
      auto b = g.blocks.find(l);
      if (b == g.blocks.end()) continue;
      for (const ir::Op* op : b->second.ops) {
        const ir::OpDef* d = ir::OpRegistry::get().find(op->kind);
        if (!d || d->p2p) ok = false;
        if (d && d->collective)
          for (const auto& [name, a] : op->attrs) {
            if (std::holds_alternative<ir::Groups>(a)) ok = false;
            if (auto* axes = std::get_if<ir::Strings>(&a))
              for (const auto& x : *axes) ok = ok && !selected.count(x);
          }
      }
      auto run = std::find_if(g.runs.begin(), g.runs.end(),
                              [&](const auto& x) { return x.first <= l && l <= x.second; });
      if (run == g.runs.end() || run->first == l)
        ok = false;
      else
        r = std::max(r, run->first);
    }
    if (ok && r >= 0) rep[l] = r;
  }
  std::vector<Segments> segs(gs.size());
  for (auto it = rep.begin(); it != rep.end();) {
    const auto [l, r] = *it;
    bool ok = true;
    for (size_t k = 0; k < gs.size() && ok; ++k) {
      const GraphLayers& g = gs[k];
      auto b = g.blocks.find(l), a = g.blocks.find(r);
      if (b == g.blocks.end()) continue;
      if (a == g.blocks.end() || a->second.ops.size() != b->second.ops.size()) {
        ok = false;
        break;
      }
      for (size_t i = 0; i < b->second.ops.size() && ok; ++i) {
        const ir::OpDef* d = ir::OpRegistry::get().find(b->second.ops[i]->kind);
        if (!d || !d->collective) continue;
        const ir::Graph* owner = b->second.owner[i];
        if (a->second.owner[i] != owner) {
          ok = false;
          break;
        }
        if (segs[k].empty()) p2p_segments(*g.graph, segs[k]);
        const std::vector<int>& sg = segs[k].at(owner);
        const ir::Op* base = owner->ops.data();
        ok = sg.at(static_cast<size_t>(b->second.ops[i] - base)) ==
             sg.at(static_cast<size_t>(a->second.ops[i] - base));
      }
    }
    it = ok ? std::next(it) : rep.erase(it);
  }
  return rep;
}

std::string runs_text(const std::map<int64_t, int64_t>& rep) {
  std::string s;
  for (auto it = rep.begin(); it != rep.end();) {
    auto end = it;
    while (std::next(end) != rep.end() && std::next(end)->first == end->first + 1 &&
           std::next(end)->second == it->second)
      ++end;
    s += (s.empty() ? "" : ", ") + std::to_string(it->first) +
         (end != it ? ".." + std::to_string(end->first) : "") + " as " + std::to_string(it->second);
    it = std::next(end);
  }
  return s;
}

}  // namespace

namespace {

// Which partial sum a partial placement joins is its ordinal among its
// program's partials of one region (ir::partial_ordinals). A stub keeps only
// the partials kept ops read; were another partial of its region dropped,
// the ones left would be numbered anew and pair with other addends, or a sum
// would lose members while its seed still says they add up to the region
// (`fold_bug_glue_reads_mixed_partial_ordinals_mpmd`, once VERIFIED). So each
// partial sum is kept whole or not at all, every kept placement with the
// ordinal it had.
void check_partial_sums(const ir::Plan& given, const ir::Plan& folded,
                        const std::vector<size_t>& kept_from) {
  const std::vector<uint32_t> before = ir::partial_ordinals(given);
  const std::vector<uint32_t> after = ir::partial_ordinals(folded);
  auto sum_of = [&](const ir::Placement& p, uint32_t ord) {
    return ir::partial_sum_key("", p) + '#' + std::to_string(ord);
  };
  std::unordered_map<std::string, size_t> members;
  for (size_t k = 0; k < given.placements.size(); ++k)
    if (given.placements[k].kind == ir::PlacementKind::partial)
      ++members[sum_of(given.placements[k], before[k])];
  std::unordered_map<std::string, size_t> kept;
  for (size_t j = 0; j < folded.placements.size(); ++j) {
    const ir::Placement& p = folded.placements[j];
    if (p.kind != ir::PlacementKind::partial) continue;
    const uint32_t ord = before[kept_from[j]];
    if (after[j] != ord)
      throw Refused{"program " + p.program + " places '" + p.value + "' as partial " +
                    std::to_string(ord) + " of spec '" + p.spec_value +
                    "'; the folded case would number it " + std::to_string(after[j])};
    ++kept[sum_of(p, ord)];
  }
  for (const auto& [key, n] : kept)
    if (n != members.at(key))
      throw Refused{"a partial sum of spec '" + key.substr(1, key.find('\n', 1) - 1) +
                    "' would keep " + std::to_string(n) + " of its " + std::to_string(members.at(key)) +
                    " placements"};
}

}  // namespace

LayerFold fold_layers(const ir::Case& c, const ir::TypeMap& spec_types,
                      const std::map<std::string, ir::TypeMap>& types, size_t threads) {
  if (!threads) threads = ir::hardware_threads();
  LayerFold f;
  if (!c.spec) {
    f.summary = "no spec";
    return f;
  }
  // The analysis costs about as much as building two layers' stages: fold
  // only where at least 40% of the layers could go, counting three kept
  // layers a program (a model's first layer differs from the next, and a
  // layer that differs splits a run), so that plans of a few layers a stage
  // skip it. Layers are counted from the inputs' names (weights carry
  // them), which costs nothing.
  {
    size_t layers = 0, droppable = 0;
    for (const auto& p : c.plan.programs) {
      std::set<int64_t> ls;
      for (const auto& in : p.graph.inputs)
        for (const auto& t : layer_tokens(in)) ls.insert(t.layer);
      layers += ls.size();
      droppable += ls.size() > 1 ? ls.size() - 1 : 0;
    }
    if (droppable * 10 < layers * 4) return f;
  }
  std::vector<GraphLayers> gs = find_layer_blocks(c, threads);
  std::set<int64_t> all;
  for (const auto& g : gs)
    for (const auto& [l, b] : g.blocks) all.insert(l);
  f.layers = all.size();
  std::map<int64_t, int64_t> rep = choose(c, gs);
  if (rep.empty()) {
    f.summary =
        all.empty() ? "" : "no run of three or more layers that are exact images of one another";
    return f;
  }
  try {
    // gs[0] is the spec; the programs follow in order.
    std::vector<ScopeFold> scopes;
    scopes.reserve(gs.size());
    static const ir::TypeMap none;
    for (const auto& g : gs) {
      const ir::TypeMap* t = &spec_types;
      if (!g.program.empty()) {
        auto it = types.find(g.program);
        t = it == types.end() ? &none : &it->second;
      }
      scopes.emplace_back(g, rep, *t);
    }
    // Each spec and program's checks and plan read only its own graph; a
    // refusal on any thread is the first one in scope order.
    auto each_scope = [&](void (ScopeFold::*step)()) {
      std::vector<std::string> refused(scopes.size());
      ir::parallel_for(scopes.size(), threads, [&](size_t k) {
        try {
          (scopes[k].*step)();
        } catch (const Refused& r) {
          refused[k] = r.why;
        }
      });
      for (const auto& why : refused)
        if (!why.empty()) throw Refused{why};
    };
    each_scope(&ScopeFold::check_cones);
    std::unordered_map<std::string_view, size_t> scope_of;
    for (size_t k = 1; k < gs.size(); ++k) scope_of[gs[k].program] = k;
    // A dropped layer's values are placed only on its spec values and its
    // spec values only by them: their stages are the dropped layer's alone.
    // One exception: a received value placed on a dropped layer's spec
    // value (the next pipeline stage's copy of a stage's last output). Its
    // stage is built in the folded case with the spec value free, proving
    // that placement for every value its sender's placement stands for.
    OpenStages open;
    for (const auto& p : c.plan.placements) {
      auto it = scope_of.find(p.program);
      if (it == scope_of.end()) throw Refused{"a placement names an unknown program"};
      bool plan_side = scopes[it->second].of_dropped(p.value);
      bool spec_side = scopes[0].of_dropped(p.spec_value);
      if (!plan_side && spec_side && p.kind == ir::PlacementKind::region &&
          scopes[it->second].received(p.value)) {
        open[p.spec_value].insert({p.program, p.value});
        continue;
      }
      if (plan_side != spec_side)
        throw Refused{"program " + p.program + " places '" + p.value + "' on spec '" +
                      p.spec_value + "': one is of a layer that would be dropped, the other not"};
    }
    each_scope(&ScopeFold::plan);

    ir::Case out;
    out.spec.emplace();
    out.spec->name = c.spec->name;
    out.spec->dims = c.spec->dims;
    out.spec->roles = c.spec->roles;
    out.plan.name = c.plan.name;
    out.plan.mesh = c.plan.mesh;
    out.plan.dims = c.plan.dims;
    std::vector<std::unordered_set<std::string>> used(gs.size());
    std::function<void(const ir::Graph&, std::unordered_set<std::string>&)> collect =
        [&](const ir::Graph& g, std::unordered_set<std::string>& u) {
          for (const auto& op : g.ops) {
            u.insert(op.operands.begin(), op.operands.end());
            for (const auto& b : op.regions) {
              u.insert(b.outputs.begin(), b.outputs.end());
              collect(b, u);
            }
          }
        };
    auto filter_outputs = [&](ir::Graph& g, const ScopeFold& s) {
      std::vector<std::string> keep;
      for (const auto& o : g.outputs)
        if (s.kept(o) && !s.of_dropped(o)) keep.push_back(o);
      g.outputs = std::move(keep);
    };
    std::vector<std::unordered_set<std::string>> defined(gs.size());
    out.plan.programs.resize(c.plan.programs.size());
    ir::parallel_for(gs.size(), threads, [&](size_t k) {
      if (k == 0) {
        out.spec->graph = scopes[0].rebuild(c.spec->graph);
        return;
      }
      const size_t i = k - 1;
      const ir::Program& prog = c.plan.programs[i];
      ir::Program& np = out.plan.programs[i];
      np.name = prog.name;
      np.ranks = prog.ranks;
      np.graph = scopes[k].rebuild(prog.graph);
      filter_outputs(np.graph, scopes[k]);
      collect(np.graph, used[k]);
      used[k].insert(np.graph.outputs.begin(), np.graph.outputs.end());
      std::vector<std::string> ins;
      for (const auto& in : np.graph.inputs)
        if (!scopes[k].of_dropped(in) || used[k].count(in)) ins.push_back(in);
      np.graph.inputs = std::move(ins);
    });
    std::function<void(const ir::Graph&, std::unordered_set<std::string>&)> defs =
        [&](const ir::Graph& g, std::unordered_set<std::string>& d) {
          for (const auto& op : g.ops) {
            d.insert(op.results.begin(), op.results.end());
            for (const auto& b : op.regions) {
              d.insert(b.inputs.begin(), b.inputs.end());
              defs(b, d);
            }
          }
        };
    for (size_t k = 1; k < gs.size(); ++k) {
      const ir::Graph& g = out.plan.programs[k - 1].graph;
      defined[k].insert(g.inputs.begin(), g.inputs.end());
      defs(g, defined[k]);
    }
    std::unordered_set<std::string> targeted;
    std::vector<size_t> kept_from;  // index in the plan of each kept placement
    for (size_t k = 0; k < c.plan.placements.size(); ++k) {
      const ir::Placement& p = c.plan.placements[k];
      if (defined[scope_of.at(p.program)].count(p.value)) {
        out.plan.placements.push_back(p);
        kept_from.push_back(k);
        targeted.insert(p.spec_value);
        if (scopes[0].of_dropped(p.spec_value)) f.assumed.insert(p.spec_value);
      }
    }
    check_partial_sums(c.plan, out.plan, kept_from);
    // The spec: outputs it still defines, inputs still read or placed on.
    ir::Graph& sg = out.spec->graph;
    filter_outputs(sg, scopes[0]);
    collect(sg, used[0]);
    used[0].insert(sg.outputs.begin(), sg.outputs.end());
    std::vector<std::string> ins;
    for (const auto& in : sg.inputs)
      if (!scopes[0].of_dropped(in) || used[0].count(in) || targeted.count(in)) ins.push_back(in);
    sg.inputs = std::move(ins);
    defined[0].insert(sg.inputs.begin(), sg.inputs.end());
    defs(sg, defined[0]);
    // A dropped spec value that only a stub's placement still targets (a
    // kept send reads the stub) gets a stub too: its stage is an image.
    std::vector<ir::Op> spec_stubs;
    for (const auto& y : targeted)
      if (!defined[0].count(y)) {
        if (!scopes[0].of_dropped(y))
          throw Refused{"spec value '" + y + "' is placed on but would not be defined"};
        spec_stubs.push_back(scopes[0].make_stub(y, 0));
        defined[0].insert(y);
      }
    sg.ops.insert(sg.ops.begin(), std::make_move_iterator(spec_stubs.begin()),
                  std::make_move_iterator(spec_stubs.end()));
    // A spec stub is a cut only while some kept placement targets it; one
    // that none does would be the constant its `fill` writes, in the stages
    // of every kept value that reads it (a gradient norm whose plan leaves a
    // folded layer's term out, `fold_bug_gradnorm_skips_dropped_layer_term`,
    // once VERIFIED: the spec's term was 0 too).
    for (const auto& y : scopes[0].stub_names())
      if (!targeted.count(y))
        throw Refused{"spec value '" + y +
                      "' of a dropped layer is read by a kept spec op, but no kept plan value is "
                      "placed on it"};
    std::map<std::string, ir::Role> roles;
    std::unordered_set<std::string> ends(sg.inputs.begin(), sg.inputs.end());
    ends.insert(sg.outputs.begin(), sg.outputs.end());
    for (const auto& [v, r] : out.spec->roles)
      if (ends.count(v)) roles[v] = r;
    out.spec->roles = std::move(roles);
    for (auto& [y, vs] : open)
      if (!f.assumed.count(y))
        throw Refused{"spec value '" + y + "' is received on a kept program but not placed there"};
    f.open = std::move(open);
    f.kase = std::move(out);
    f.folded = true;
    f.dropped = rep.size();
    size_t stubs = 0;
    for (const auto& s : scopes) stubs += s.stubs();
    f.summary = "layers " + std::to_string(f.layers) + " -> " +
                std::to_string(f.layers - f.dropped) +
                " (the others proved as exact images of a kept layer: " + runs_text(rep) + "; " +
                std::to_string(stubs) +
                " values of dropped layers read by kept ops stand in by their placements)";
  } catch (const Refused& r) {
    f = LayerFold{};
    f.layers = all.size();
    f.summary = r.why;
  }
  return f;
}

}  // namespace parity::reduce
