#include "reduce/layer_blocks.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/op_registry.h"
#include "ir/parallel.h"

namespace parity::reduce {

namespace {

bool separator(char ch) { return ch == '.' || ch == '_'; }

using Scope = GraphLayers;

// Equal expressions read from one file share their trees: compare those
// first, the text only when the trees differ.
bool same_expr(const ir::DimExpr& a, const ir::DimExpr& b) {
  return a.id() == b.id() || a.str() == b.str();
}

bool same_exprs(const std::vector<ir::DimExpr>& a, const std::vector<ir::DimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (!same_expr(a[k], b[k])) return false;
  return true;
}

bool same_attr(const ir::Attr& a, const ir::Attr& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<ir::DimExpr>(&a)) return same_expr(*x, std::get<ir::DimExpr>(b));
  if (auto* x = std::get_if<ir::Dims>(&a)) return same_exprs(*x, std::get<ir::Dims>(b));
  if (auto* x = std::get_if<ir::Coords>(&a)) {
    const auto& y = std::get<ir::Coords>(b);
    if (x->size() != y.size()) return false;
    for (auto i = x->begin(), j = y.begin(); i != x->end(); ++i, ++j)
      if (i->first != j->first || !same_expr(i->second, j->second)) return false;
    return true;
  }
  return a == b;  // numbers, strings, axis lists, explicit groups
}

bool same_attrs(const ir::AttrMap& a, const ir::AttrMap& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
    if (i->first != j->first || !same_attr(i->second, j->second)) return false;
  return true;
}

bool same_type(const ir::TensorType& a, const ir::TensorType& b) {
  return a.dtype == b.dtype && same_exprs(a.shape, b.shape);
}

bool same_region(const std::vector<ir::Range>& a, const std::vector<ir::Range>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (!same_expr(a[k].offset, b[k].offset) || !same_expr(a[k].size, b[k].size)) return false;
  return true;
}

// A layer number at `i` of `s`: its digits' length and value.
bool token_at(std::string_view s, size_t i, size_t& len, int64_t& value) {
  if (s[i] != 'l' || (i > 0 && !separator(s[i - 1]))) return false;
  size_t j = i + 1;
  while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
  len = j - i - 1;
  if (len == 0 || len > 9 || (len > 1 && s[i + 1] == '0')) return false;
  if (j < s.size() && !separator(s[j])) return false;
  value = 0;
  for (size_t k = i + 1; k < j; ++k) value = value * 10 + (s[k] - '0');
  return true;
}

std::string attrs_str(const ir::AttrMap& a) {
  std::string s;
  for (const auto& [k, v] : a) s += (s.empty() ? "" : ", ") + k + "=" + ir::attr_str(v);
  return s.empty() ? "no attributes" : s;
}

// Whether `b` is `a` with its layer numbers shifted by `by`, from their entries.
bool shifted(const GraphLayers::Name& a, const GraphLayers::Name& b, std::string_view ta,
             std::string_view tb, int64_t by) {
  if (a.count > 4 || b.count > 4) return is_shifted(ta, tb, by);
  if (a.base != b.base || a.count != b.count) return false;
  for (int k = 0; k < a.count; ++k)
    if (b.layer[k] != a.layer[k] + by) return false;
  return true;
}

// Why `nb` (a value of the later block) is not the image of `na` under `by`.
std::optional<std::string> value_break(const Scope& s, const std::string& na, const std::string& nb,
                                       int64_t by, int64_t of) {
  auto ia = s.names.find(na), ib = s.names.find(nb);
  if (ia == s.names.end() || ib == s.names.end() || !shifted(ia->second, ib->second, na, nb, by))
    return "reads or defines '" + nb + "' where layer " + std::to_string(of) + " has '" + na + "'";
  const GraphLayers::Name& a = ia->second;
  const GraphLayers::Name& b = ib->second;
  const ir::TensorType* ta = a.declared;
  const ir::TensorType* tb = b.declared;
  if (!ta != !tb || (ta && !same_type(*ta, *tb)))
    return "'" + nb + "' is declared " + (tb ? tb->str() : "without a type") + ", '" + na + "' " +
           (ta ? ta->str() : "without a type");
  const size_t ca = a.placed ? a.placed->size() : 0;
  const size_t cb = b.placed ? b.placed->size() : 0;
  if (ca != cb)
    return "'" + nb + "' has " + std::to_string(cb) + " placement(s), '" + na + "' " +
           std::to_string(ca);
  if (s.program.empty()) return std::nullopt;
  for (size_t k = 0; k < ca; ++k) {
    const ir::Placement& pa = *(*a.placed)[k];
    const ir::Placement& pb = *(*b.placed)[k];
    // The partial ordinal says which addends of other programs a partial
    // value is summed with: two partials of one region listed in swapped
    // order in one layer pair differently (`fold_bug_partial_ordinal_swapped`).
    if (pa.kind != pb.kind || !same_region(pa.region, pb.region) || pa.axes != pb.axes ||
        s.ordinal(pa) != s.ordinal(pb) || !is_shifted(pa.spec_value, pb.spec_value, by))
      return "the placement of '" + nb + "' (on spec " + pb.spec_value +
             ") is not the image of that of '" + na + "' (on spec " + pa.spec_value + ")";
  }
  return std::nullopt;
}

}  // namespace

std::optional<BlockBreak> image_break(const GraphLayers& s, const LayerBlock& a,
                                      const LayerBlock& b) {
  const int64_t by = b.layer - a.layer;
  BlockBreak br;
  br.layer = b.layer;
  br.of = a.layer;
  // Op by op first: the first op that differs says more than the counts.
  for (size_t i = 0; i < std::min(a.ops.size(), b.ops.size()); ++i) {
    const ir::Op& x = *a.ops[i];
    const ir::Op& y = *b.ops[i];
    br.op = &y;
    auto where = [&] {
      return " where layer " + std::to_string(a.layer) + " has `" + x.label() + "`";
    };
    if (a.region[i] != b.region[i]) {
      br.why = "is in another region (top level or loop body)" + where();
      return br;
    }
    if (x.kind != y.kind) {
      br.why = "is op " + y.kind + where();
      return br;
    }
    if (x.results.size() != y.results.size() || x.operands.size() != y.operands.size()) {
      br.why = "has another number of operands or results" + where();
      return br;
    }
    if (!same_attrs(x.attrs, y.attrs)) {
      br.why = "has " + attrs_str(y.attrs) + where() + " (" + attrs_str(x.attrs) + ")";
      return br;
    }
    auto names = [&](const std::vector<std::string>& na, const std::vector<std::string>& nb) {
      for (size_t k = 0; k < na.size(); ++k)
        if (auto why = value_break(s, na[k], nb[k], by, a.layer)) return why;
      return std::optional<std::string>{};
    };
    if (auto why = names(x.results, y.results)) {
      br.why = *why;
      return br;
    }
    if (auto why = names(x.operands, y.operands)) {
      br.why = *why;
      return br;
    }
  }
  if (a.ops.size() != b.ops.size()) {
    br.op = nullptr;
    br.why = std::to_string(b.ops.size()) + " ops where layer " + std::to_string(a.layer) +
             " has " + std::to_string(a.ops.size());
    return br;
  }
  return std::nullopt;
}

namespace {

// Assigns the ops of `g` (and of its loop bodies) to blocks.
struct Blocker {
  GraphLayers& out;
  int regions = 0;

  std::unordered_map<std::string, uint32_t> bases;

  GraphLayers::Name& name(const std::string& n) {
    auto [it, fresh] = out.names.try_emplace(n);
    GraphLayers::Name& e = it->second;
    if (!fresh) return e;
    std::string base;
    size_t at = 0;
    for (const auto& t : layer_tokens(n)) {
      if (e.count < 4) e.layer[e.count] = t.layer;
      e.count = static_cast<uint8_t>(std::min<int>(e.count + 1, 5));
      base.append(n, at, t.pos - at);
      at = t.pos + t.len;
    }
    base.append(n, at, std::string::npos);
    e.base = bases.try_emplace(std::move(base), static_cast<uint32_t>(bases.size())).first->second;
    if (auto p = out.placed.find(n); p != out.placed.end()) e.placed = &p->second;
    return e;
  }

  // The smallest and largest layer number of a name; false when it has none.
  static bool range(const GraphLayers::Name& e, int64_t& lo, int64_t& hi) {
    if (e.count == 0) return false;
    lo = hi = e.layer[0];
    for (int k = 1; k < std::min<int>(e.count, 4); ++k)
      lo = std::min(lo, e.layer[k]), hi = std::max(hi, e.layer[k]);
    return true;
  }

  void walk(const ir::Graph& g, int region, const std::vector<std::string>& inputs) {
    // Only the inputs' declared types matter to the image: the other values'
    // types follow from the ops, which are compared.
    for (const auto& in : inputs) {
      GraphLayers::Name& e = name(in);
      if (auto it = g.types.find(in); it != g.types.end()) e.declared = &it->second;
    }
    for (const auto& op : g.ops) {
      std::optional<int64_t> layer;
      bool glue = false;
      std::vector<GraphLayers::Name*> res;
      for (const auto& r : op.results) {
        GraphLayers::Name& e = name(r);
        res.push_back(&e);
        int64_t lo = 0, hi = 0;
        if (!range(e, lo, hi) || lo != hi || (layer && *layer != lo)) glue = true;
        layer = lo;
      }
      for (const auto& o : op.operands) {
        const GraphLayers::Name& e = name(o);
        if (glue) continue;
        int64_t lo = 0, hi = 0;
        if (range(e, lo, hi) && (!layer || hi > *layer)) layer = hi;
        // Through an unplaced value the op continues its producer's
        // block (`d_l2.out_3 = reduce_mean(d_l2.out_2)` is layer 3's
        // backward when `d_l2.out_2` is); a placed value ends it.
        if (e.block >= 0 && !e.placed && (!layer || e.block > *layer)) layer = e.block;
      }
      for (const auto& body : op.regions) {
        for (const auto& o : body.outputs) name(o);
      }
      // A send or receive is the pipeline's seam, not part of a layer: the
      // last layer of a stage, which sends its output, is then its
      // neighbours' image, and so is the first, which reads what was received.
      const ir::OpDef* def = ir::OpRegistry::get().find(op.kind);
      if (!def || def->p2p) glue = true;
      if (glue || !layer || !op.regions.empty()) {
        ++out.glue_ops;
      } else {
        out.block_of[&op] = *layer;
        for (auto* e : res) e->block = *layer;
        LayerBlock& b = out.blocks[*layer];
        b.layer = *layer;
        b.ops.push_back(&op);
        b.owner.push_back(&g);
        b.region.push_back(region);
      }
      for (const auto& body : op.regions) walk(body, ++regions, body.inputs);
    }
  }
};

void analyse(GraphLayers& gl) {
  Blocker b{gl, 0, {}};
  b.walk(*gl.graph, 0, gl.graph->inputs);
  std::optional<int64_t> prev;
  for (const auto& [layer, block] : gl.blocks) {
    bool joined = false;
    if (prev && *prev + 1 == layer) {
      if (auto br = image_break(gl, gl.blocks.at(*prev), block))
        gl.breaks.push_back(std::move(*br));
      else
        joined = true;
    }
    if (joined)
      gl.runs.back().second = layer;
    else
      gl.runs.push_back({layer, layer});
    prev = layer;
  }
}

std::string range_str(const std::pair<int64_t, int64_t>& r) {
  return r.first == r.second ? std::to_string(r.first)
                             : std::to_string(r.first) + ".." + std::to_string(r.second);
}

// The values `g` and its loop bodies receive.
void collect_received(std::string_view program, const ir::Graph& g,
                      std::set<std::pair<std::string_view, std::string_view>>& out) {
  for (const auto& op : g.ops) {
    if (op.kind == "recv")
      for (const auto& r : op.results) out.insert({program, r});
    for (const auto& b : op.regions) collect_received(program, b, out);
  }
}

}  // namespace

bool is_shifted(std::string_view a, std::string_view b, int64_t by) {
  size_t i = 0, j = 0, la = 0, lb = 0;
  int64_t va = 0, vb = 0;
  while (i < a.size() && j < b.size()) {
    // Most characters are no `l`: compare those without parsing.
    if (a[i] != 'l' && b[j] != 'l') {
      if (a[i] != b[j]) return false;
      ++i, ++j;
      continue;
    }
    const bool ta = token_at(a, i, la, va), tb = token_at(b, j, lb, vb);
    if (ta != tb) return false;
    if (ta) {
      if (vb != va + by) return false;
      i += la + 1;
      j += lb + 1;
      continue;
    }
    if (a[i] != b[j]) return false;
    ++i, ++j;
  }
  return i == a.size() && j == b.size();
}

std::vector<LayerToken> layer_tokens(std::string_view name) {
  std::vector<LayerToken> out;
  size_t len = 0;
  int64_t value = 0;
  for (size_t i = 0; i < name.size(); ++i)
    if (token_at(name, i, len, value)) {
      out.push_back({i + 1, len, value});
      i += len;
    }
  return out;
}

std::string shift_layers(std::string_view name, int64_t by) {
  auto tokens = layer_tokens(name);
  if (tokens.empty() || by == 0) return std::string(name);
  std::string out;
  size_t at = 0;
  for (const auto& t : tokens) {
    if (t.layer + by < 0) return std::string(name);
    out.append(name.substr(at, t.pos - at));
    out += std::to_string(t.layer + by);
    at = t.pos + t.len;
  }
  out.append(name.substr(at));
  return out;
}

std::vector<GraphLayers> find_layer_blocks(const ir::Case& c, size_t threads) {
  // Reserved: the entries are filled in place (their maps view the case's strings).
  std::vector<GraphLayers> out;
  out.reserve(c.plan.programs.size() + 1);
  if (c.spec) {
    GraphLayers& s = out.emplace_back();
    s.scope = "spec";
    s.graph = &c.spec->graph;
    // A received value is placed on the spec value its sender's is placed
    // on: that placement is the transfer's, counted apart (a stage's last
    // layer has its output placed twice, its neighbours once).
    std::set<std::pair<std::string_view, std::string_view>> received;
    for (const auto& prog : c.plan.programs) collect_received(prog.name, prog.graph, received);
    for (const auto& p : c.plan.placements) {
      if (received.count({p.program, p.value}))
        s.transfers[p.spec_value].push_back(&p);
      else
        s.placed[p.spec_value].push_back(&p);
    }
  }
  std::unordered_map<std::string_view, GraphLayers*> of;
  auto ordinals = std::make_shared<const std::vector<uint32_t>>(ir::partial_ordinals(c.plan));
  for (const auto& prog : c.plan.programs) {
    GraphLayers& s = out.emplace_back();
    s.ordinals = ordinals;
    s.first_placement = c.plan.placements.data();
    s.scope = "program " + prog.name;
    s.program = prog.name;
    s.graph = &prog.graph;
    of[prog.name] = &s;
  }
  for (const auto& p : c.plan.placements)
    if (auto it = of.find(p.program); it != of.end()) it->second->placed[p.value].push_back(&p);
  // Each spec and program is analysed on its own (they only read the case).
  ir::parallel_for(out.size(), threads ? threads : ir::hardware_threads(),
                   [&](size_t k) { analyse(out[k]); });
  return out;
}

std::string layers_report(const std::vector<GraphLayers>& gs) {
  std::string s;
  for (const auto& g : gs) {
    s += g.scope + ": ";
    if (g.blocks.empty()) {
      s += "no layer numbers in its value names (" + std::to_string(g.glue_ops) + " ops)\n";
      continue;
    }
    size_t ops = 0;
    for (const auto& [l, b] : g.blocks) ops += b.ops.size();
    s += std::to_string(g.blocks.size()) + " layers (" + std::to_string(ops) + " ops in blocks, " +
         std::to_string(g.glue_ops) + " glue ops); runs of images:";
    for (size_t k = 0; k < g.runs.size(); ++k) s += (k ? ", " : " ") + range_str(g.runs[k]);
    s += "\n";
    for (const auto& br : g.breaks) {
      s += "  layer " + std::to_string(br.layer) + " is not the image of layer " +
           std::to_string(br.of) + ": ";
      s += br.op ? "`" + br.op->label() + "` " + br.why : br.why;
      s += "\n";
    }
  }
  return s;
}

}  // namespace parity::reduce
