#include "reduce/layer_blocks.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace parity::reduce {

namespace {

bool separator(char ch) { return ch == '.' || ch == '_'; }

// The spec's or a program's lookups the image check needs.
struct Scope {
  const ir::Graph* top = nullptr;
  // Program: value -> its placements. Spec: value -> placements targeting it.
  std::unordered_map<std::string_view, std::vector<const ir::Placement*>> placed;
  bool spec = false;
};

const ir::TensorType* declared(const Scope& s, const ir::Graph* owner, const std::string& name) {
  if (auto it = owner->types.find(name); it != owner->types.end()) return &it->second;
  if (auto it = s.top->types.find(name); it != s.top->types.end()) return &it->second;
  return nullptr;
}

std::string attrs_str(const ir::AttrMap& a) {
  std::string s;
  for (const auto& [k, v] : a) s += (s.empty() ? "" : ", ") + k + "=" + ir::attr_str(v);
  return s.empty() ? "no attributes" : s;
}

// Why `nb` (a value of the later block) is not the image of `na` under `by`.
std::optional<std::string> value_break(const Scope& s, const ir::Graph* oa, const ir::Graph* ob,
                                       const std::string& na, const std::string& nb, int64_t by,
                                       int64_t of) {
  const std::string want = shift_layers(na, by);
  if (want != nb)
    return "reads or defines '" + nb + "' where layer " + std::to_string(of) + " has '" + na + "'";
  const ir::TensorType* ta = declared(s, oa, na);
  const ir::TensorType* tb = declared(s, ob, nb);
  if (!ta != !tb || (ta && ta->str() != tb->str()))
    return "'" + nb + "' is declared " + (tb ? tb->str() : "without a type") + ", '" + na + "' " +
           (ta ? ta->str() : "without a type");
  auto ia = s.placed.find(na), ib = s.placed.find(nb);
  const size_t ca = ia == s.placed.end() ? 0 : ia->second.size();
  const size_t cb = ib == s.placed.end() ? 0 : ib->second.size();
  if (ca != cb)
    return "'" + nb + "' has " + std::to_string(cb) + " placement(s), '" + na + "' " +
           std::to_string(ca);
  if (s.spec) return std::nullopt;
  for (size_t k = 0; k < ca; ++k) {
    const ir::Placement& pa = *ia->second[k];
    const ir::Placement& pb = *ib->second[k];
    if (pa.kind != pb.kind || !(pa.region == pb.region) || pa.axes != pb.axes ||
        shift_layers(pa.spec_value, by) != pb.spec_value)
      return "the placement of '" + nb + "' (on spec " + pb.spec_value +
             ") is not the image of that of '" + na + "' (on spec " + pa.spec_value + ")";
  }
  return std::nullopt;
}

std::optional<BlockBreak> image_break(const Scope& s, const LayerBlock& a, const LayerBlock& b) {
  const int64_t by = b.layer - a.layer;
  BlockBreak br;
  br.layer = b.layer;
  br.of = a.layer;
  // Op by op first: the first op that differs says more than the counts.
  for (size_t i = 0; i < std::min(a.ops.size(), b.ops.size()); ++i) {
    const ir::Op& x = *a.ops[i];
    const ir::Op& y = *b.ops[i];
    br.op = &y;
    const std::string at = " where layer " + std::to_string(a.layer) + " has `" + x.label() + "`";
    if (a.region[i] != b.region[i]) {
      br.why = "is in another region (top level or loop body)" + at;
      return br;
    }
    if (x.kind != y.kind) {
      br.why = "is op " + y.kind + at;
      return br;
    }
    if (x.results.size() != y.results.size() || x.operands.size() != y.operands.size()) {
      br.why = "has another number of operands or results" + at;
      return br;
    }
    if (attrs_str(x.attrs) != attrs_str(y.attrs)) {
      br.why = "has " + attrs_str(y.attrs) + at + " (" + attrs_str(x.attrs) + ")";
      return br;
    }
    auto names = [&](const std::vector<std::string>& na, const std::vector<std::string>& nb) {
      for (size_t k = 0; k < na.size(); ++k)
        if (auto why = value_break(s, a.owner[i], b.owner[i], na[k], nb[k], by, a.layer))
          return why;
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

// Assigns the ops of `g` (and of its loop bodies) to blocks.
struct Blocker {
  GraphLayers& out;
  int regions = 0;

  void walk(const ir::Graph& g, int region) {
    for (const auto& op : g.ops) {
      std::optional<int64_t> layer;
      bool glue = false;
      for (const auto& r : op.results) {
        auto t = layer_tokens(r);
        if (t.empty()) {
          glue = true;
          break;
        }
        for (const auto& tk : t) {
          if (layer && *layer != tk.layer) glue = true;
          layer = tk.layer;
        }
      }
      if (!glue) {
        for (const auto& o : op.operands)
          for (const auto& tk : layer_tokens(o))
            if (!layer || tk.layer > *layer) layer = tk.layer;
      }
      if (glue || !layer || !op.regions.empty()) {
        ++out.glue_ops;
      } else {
        LayerBlock& b = out.blocks[*layer];
        b.layer = *layer;
        b.ops.push_back(&op);
        b.owner.push_back(&g);
        b.region.push_back(region);
      }
      for (const auto& body : op.regions) walk(body, ++regions);
    }
  }
};

GraphLayers analyse(const std::string& scope_name, const Scope& s) {
  GraphLayers gl;
  gl.scope = scope_name;
  Blocker{gl}.walk(*s.top, 0);
  std::optional<int64_t> prev;
  for (const auto& [layer, block] : gl.blocks) {
    bool joined = false;
    if (prev && *prev + 1 == layer) {
      if (auto br = image_break(s, gl.blocks.at(*prev), block))
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
  return gl;
}

std::string range_str(const std::pair<int64_t, int64_t>& r) {
  return r.first == r.second ? std::to_string(r.first)
                             : std::to_string(r.first) + ".." + std::to_string(r.second);
}

}  // namespace

std::vector<LayerToken> layer_tokens(std::string_view name) {
  std::vector<LayerToken> out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != 'l' || (i > 0 && !separator(name[i - 1]))) continue;
    size_t j = i + 1;
    while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
    const size_t len = j - i - 1;
    // A leading zero (`l07`) or a number too long to shift exactly is no layer.
    if (len == 0 || len > 9 || (len > 1 && name[i + 1] == '0')) continue;
    if (j < name.size() && !separator(name[j])) continue;
    out.push_back({i + 1, len, std::stoll(std::string(name.substr(i + 1, len)))});
    i = j - 1;
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

std::vector<GraphLayers> find_layer_blocks(const ir::Case& c) {
  std::vector<GraphLayers> out;
  if (c.spec) {
    Scope s;
    s.top = &c.spec->graph;
    s.spec = true;
    for (const auto& p : c.plan.placements) s.placed[p.spec_value].push_back(&p);
    out.push_back(analyse("spec", s));
  }
  for (const auto& prog : c.plan.programs) {
    Scope s;
    s.top = &prog.graph;
    for (const auto& p : c.plan.placements)
      if (p.program == prog.name) s.placed[p.value].push_back(&p);
    out.push_back(analyse("program " + prog.name, s));
  }
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
