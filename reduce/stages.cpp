#include "reduce/stages.h"

#include "reduce/walk.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "ir/parallel.h"

namespace parity::reduce {

namespace {

bool is_collective(const ir::Op& op) {
  return op.kind != "send" && op.kind != "recv" && (op.attr("axes") || op.attr("groups"));
}

void put(std::string& k, int64_t v) {
  if (v >= 0 && v < 10) {  // most are: local numbers, small sizes
    k.push_back(static_cast<char>('0' + v));
    return;
  }
  if (v >= 10 && v < 100) {
    const char b[2] = {static_cast<char>('0' + v / 10), static_cast<char>('0' + v % 10)};
    k.append(b, 2);
    return;
  }
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, v);
  k.append(b, r.ptr);
}

void put_expr(std::string& k, const ir::DimExpr& e, const ir::Bindings& b) {
  int64_t v;
  if (e.try_eval(b, v)) put(k, v);
  else k += e.str();
}

std::string num(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

// The attributes of an instruction as they enter a stage key, with peers,
// tags and groups left out (the instance graph has resolved them): text with
// the expressions that read coordinates or loop indices (`$` symbols) left
// to evaluate per instance, the dims and axis sizes in `shared` already bound.
// Built once per instruction of a program, not per instance.
AttrKey make_attrs_key(const ir::Instr& ins, const ir::Bindings& shared) {
  AttrKey t;
  std::string& k = t.text;
  if (ins.kind == ir::Instr::bind) {
    k += "bind";
    return t;
  }
  const ir::Op& op = *ins.op;
  std::vector<std::pair<size_t, ir::DimExpr>> per_instance;
  auto ev = [&](const ir::DimExpr& e) {
    if (e.is_const()) put(k, e.const_value());
    else if (!has_coord(e)) put_expr(k, e, shared);
    else {
      per_instance.push_back({k.size(), e.bind(shared)});
    }
  };
  k += op.kind;
  k += '{';
  for (const auto& [name, a] : op.attrs) {
    if (name == "peer" || name == "tag" || name == "axes" || name == "groups") continue;
    k += name;
    k += '=';
    if (auto* d = std::get_if<double>(&a)) k += num(*d);
    else if (auto* s = std::get_if<std::string>(&a)) k += *s;
    else if (auto* e = std::get_if<ir::DimExpr>(&a)) ev(*e);
    else if (auto* ds = std::get_if<ir::Dims>(&a)) {
      for (const auto& e : *ds) {
        ev(e);
        k += ',';
      }
    } else if (auto* ss = std::get_if<ir::Strings>(&a)) {
      for (const auto& s2 : *ss) {
        k += s2;
        k += ',';
      }
    }
    k += ';';
  }
  k += '}';
  if (!per_instance.empty())
    t.exprs = std::make_shared<const std::vector<std::pair<size_t, ir::DimExpr>>>(std::move(per_instance));
  return t;
}

// Appends `t` with its expressions evaluated under `b`.
void append_attrs(std::string& k, const AttrKey& t, const ir::Bindings& b) {
  if (!t.exprs) {
    k += t.text;
    return;
  }
  size_t at = 0;
  for (const auto& [pos, e] : *t.exprs) {
    k.append(t.text, at, pos - at);
    put_expr(k, e, b);
    at = pos;
  }
  k.append(t.text, at);
}

// A placement's region (offsets and sizes evaluated under `b`) and axes.
void append_region_key(std::string& k, const std::vector<ir::Range>& region, const std::vector<std::string>& axes,
                       const ir::Bindings& b) {
  k += '[';
  for (const auto& rg : region) {
    put_expr(k, rg.offset, b);
    k += ':';
    put_expr(k, rg.size, b);
    k += ',';
  }
  k += ']';
  for (const auto& a : axes) {
    k += a;
    k += ',';
  }
}


}  // namespace

StageGraph::StageGraph(const ir::Case& c, size_t threads, const ir::TypeMap* spec_types, size_t max_rank_instructions,
                       const std::set<std::string>* assumed, const OpenStages* open)
    : c_(c), threads_(threads), max_rank_instructions_(max_rank_instructions), assumed_(assumed), open_(open) {
  if (!c.spec) throw ir::EvalError("no spec");
  dims_ = c.spec->dims;
  for (const auto& [k, v] : c.plan.dims) dims_[k] = v;
  ir::DiagList d;
  if (spec_types) {
    spec_types_ = *spec_types;
  } else {
    ir::validate_spec(*c.spec, "", d, &spec_types_);
    if (!d.empty()) throw ir::EvalError("the spec does not validate");
  }
  build_spec_nodes();
  build_nodes();
  if (rank_instructions_ > max_rank_instructions_) return;
  build_stages();
}

const ir::Instr& StageGraph::instr(const Node& n) const {
  if (n.rank < 0) return spec_code_.at(static_cast<size_t>(n.instr));
  return code_of_[static_cast<size_t>(n.rank)]->instrs.at(static_cast<size_t>(n.instr));
}

const ir::Bindings& StageGraph::coords(const Node& n) const {
  static const ir::Bindings kNone;
  if (n.rank < 0) return kNone;
  if (n.instr < 0) return rank_coords_[static_cast<size_t>(n.rank)];
  const Code& code = *code_of_[static_cast<size_t>(n.rank)];
  return rank_iter_coords_[static_cast<size_t>(n.rank)][static_cast<size_t>(code.iter[static_cast<size_t>(n.instr)])];
}

const ir::Bindings& StageGraph::bindings(const Node& n) const {
  if (n.rank < 0) return dims_;  // the spec is straight-line
  if (n.instr < 0) return rank_base_[static_cast<size_t>(n.rank)];
  const Code& code = *code_of_[static_cast<size_t>(n.rank)];
  return rank_iter_[static_cast<size_t>(n.rank)][static_cast<size_t>(code.iter[static_cast<size_t>(n.instr)])];
}

std::span<const int32_t> StageGraph::keep_deps(std::vector<int32_t> deps) {
  dep_lists_.push_back(std::move(deps));
  return dep_lists_.back();
}

void StageGraph::build_spec_nodes() {
  const ir::Graph& g = c_.spec->graph;
  // Checked before unrolling: a spec loop of 10^12 iterations would not fit.
  for (const auto& op : g.ops)
    if (op.kind == "loop") throw ir::EvalError("the spec has loops; stages need a straight-line spec");
  spec_code_ = ir::flatten(g, dims_);
  // Spec instances are keyed under the dims alone, loop indices unbound.
  for (const auto& ins : spec_code_) {
    AttrKey t;
    append_attrs(t.text, make_attrs_key(ins, dims_), dims_);
    spec_attrs_.push_back(std::move(t));
  }
  for (const auto& in : g.inputs) {
    spec_node_of_[in] = static_cast<int32_t>(nodes_.size());
    nodes_.push_back(Node{-1, -1, 0, &in, {}, -1, 0, {}});
  }
  for (size_t i = 0; i < spec_code_.size(); ++i) {
    const ir::Instr& ins = spec_code_[i];
    if (ins.kind != ir::Instr::exec || !ins.loop().empty())
      throw ir::EvalError("the spec has loops; stages need a straight-line spec");
    for (size_t k = 0; k < ins.op->results.size(); ++k) {
      Node n{-1, static_cast<int32_t>(i), static_cast<int32_t>(k), &ins.op->results[k], {}, -1, 0, {}};
      std::vector<int32_t> deps;
      for (const auto& o : ins.op->operands) deps.push_back(spec_node_of_.at(o));
      n.deps = keep_deps(std::move(deps));
      if (!spec_node_of_.emplace(*n.name, static_cast<int32_t>(nodes_.size())).second)
        throw ir::EvalError("spec value defined twice");
      nodes_.push_back(std::move(n));
    }
  }
}

void StageGraph::build_nodes() {
  const ir::Plan& p = c_.plan;
  ir::Bindings base = dims_;
  for (const auto& a : p.mesh.axes) base[a.name] = a.size;
  // Counted before anything is unrolled: a program that alone is past the
  // limit (a loop count of 10^12) is neither unrolled nor laid out, and the
  // count says by how much (exactly, up to 16 times the limit).
  {
    const size_t lim = max_rank_instructions_;
    const size_t cap = std::max<size_t>(lim > (SIZE_MAX >> 8) ? (SIZE_MAX >> 8) : 16 * lim, size_t{1} << 24);
    std::map<std::string, size_t> len;
    bool over = false;
    for (const auto& prog : p.programs) over |= (len[prog.name] = ir::flat_size(prog.graph, base, cap)) > lim;
    if (over) {
      rank_instructions_ = 0;
      for (int64_t r = 0; r < p.mesh.num_ranks() && rank_instructions_ <= cap; ++r)
        if (const ir::Program* prog = p.program_of(r)) rank_instructions_ += len[prog->name];
      return;
    }
  }
  for (const auto& prog : p.programs) {
    Code& code = code_[prog.name];
    code.instrs = ir::flatten(prog.graph, base);
    std::map<ir::Bindings, int32_t> iters;
    // An iteration's instructions share their loop indices, and every
    // iteration runs the same ops: both looked up by pointer first.
    const ir::Bindings* last_loop = nullptr;
    int32_t last_iter = 0;
    std::unordered_map<const ir::Op*, size_t> key_of_op;
    for (const auto& ins : code.instrs) {
      if (&ins.loop() != last_loop) {
        auto [it, fresh] = iters.try_emplace(ins.loop(), static_cast<int32_t>(code.iter_loop.size()));
        if (fresh) code.iter_loop.push_back(ins.loop());
        last_loop = &ins.loop();
        last_iter = it->second;
      }
      code.iter.push_back(last_iter);
      if (ins.kind != ir::Instr::bind && ins.op) {
        auto [k, fresh] = key_of_op.try_emplace(ins.op, code.attrs.size());
        if (!fresh) {
          code.attrs.push_back(code.attrs[k->second]);
          continue;
        }
      }
      code.attrs.push_back(make_attrs_key(ins, base));
    }
  }
  for (size_t i = 0; i < p.placements.size(); ++i)
    placements_of_[p.placements[i].program][p.placements[i].value].push_back(static_cast<uint32_t>(i));

  // Every rank running a program has the same nodes, shifted: the program's
  // nodes are laid out once (operands as local indices), then copied per
  // rank on every core. Sends, receives and collectives (which pair ranks)
  // are recorded per program and resolved per rank afterwards.
  struct TNode {
    int32_t instr, result;
    const std::string* name;
    std::vector<int32_t> deps;  // local
    const std::vector<uint32_t>* placements;
  };
  enum class Ev { send, recv, coll };
  struct TEvent {
    Ev kind;
    size_t instr;
    int32_t node, operand;  // local ids; -1 where none
  };
  struct Layout {
    std::vector<TNode> nodes;
    std::vector<TEvent> events;
    size_t deps = 0;  // operands over all nodes
  };
  std::map<std::string, Layout> layout;
  for (const auto& prog : p.programs) {
    Layout& L = layout[prog.name];
    const auto& code = code_.at(prog.name).instrs;
    const auto& placed = placements_of_[prog.name];
    std::unordered_map<std::string_view, int32_t> env;
    env.reserve(code.size() * 2);
    auto add = [&](int32_t instr, int32_t result, const std::string& name, std::vector<int32_t> deps) {
      auto it = placed.find(name);
      env[name] = static_cast<int32_t>(L.nodes.size());
      L.deps += deps.size();
      L.nodes.push_back(TNode{instr, result, &name, std::move(deps), it == placed.end() ? nullptr : &it->second});
      return static_cast<int32_t>(L.nodes.size() - 1);
    };
    for (const auto& in : prog.graph.inputs) add(-1, 0, in, {});
    for (size_t i = 0; i < code.size(); ++i) {
      const ir::Instr& ins = code[i];
      const auto ii = static_cast<int32_t>(i);
      if (ins.kind == ir::Instr::bind) {
        std::vector<int32_t> src;
        for (const auto& x : ins.src()) src.push_back(env.at(x));
        for (size_t k = 0; k < ins.dst().size(); ++k) add(ii, static_cast<int32_t>(k), ins.dst()[k], {src[k]});
        continue;
      }
      const ir::Op& op = *ins.op;
      if (op.kind == "send") {
        L.events.push_back(TEvent{Ev::send, i, -1, env.at(op.operands[0])});
      } else if (op.kind == "recv") {
        L.events.push_back(TEvent{Ev::recv, i, add(ii, 0, op.results[0], {}), -1});
      } else if (is_collective(op)) {
        int32_t operand = env.at(op.operands[0]);
        L.events.push_back(TEvent{Ev::coll, i, add(ii, 0, op.results[0], {}), operand});
      } else {
        for (size_t k = 0; k < op.results.size(); ++k) {
          std::vector<int32_t> deps;
          for (const auto& o : op.operands) deps.push_back(env.at(o));
          add(ii, static_cast<int32_t>(k), op.results[k], std::move(deps));
        }
      }
    }
  }
  int64_t n = p.mesh.num_ranks();
  prog_of_.assign(static_cast<size_t>(n), nullptr);
  code_of_.assign(static_cast<size_t>(n), nullptr);
  rank_base_.assign(static_cast<size_t>(n), {});
  rank_iter_.assign(static_cast<size_t>(n), {});
  rank_coords_.assign(static_cast<size_t>(n), {});
  rank_iter_coords_.assign(static_cast<size_t>(n), {});
  std::vector<size_t> first(static_cast<size_t>(n), 0);  // rank -> its first node
  size_t total = nodes_.size();
  for (int64_t r = 0; r < n; ++r) {
    const ir::Program* prog = p.program_of(r);
    prog_of_[static_cast<size_t>(r)] = prog;
    first[static_cast<size_t>(r)] = total;
    if (!prog) continue;
    code_of_[static_cast<size_t>(r)] = &code_.at(prog->name);
    rank_instructions_ += code_of_[static_cast<size_t>(r)]->instrs.size();
    total += layout.at(prog->name).nodes.size();
  }
  // Too large to lay out (a node per rank and instruction): the caller says why.
  if (rank_instructions_ > max_rank_instructions_) return;
  nodes_.resize(total);
  rank_deps_.assign(static_cast<size_t>(n), {});
  ir::parallel_for(static_cast<size_t>(n), threads_ ? threads_ : ir::hardware_threads(), [&](size_t r) {
    const ir::Program* prog = prog_of_[r];
    if (!prog) return;
    ir::Bindings rb = dims_;
    for (const auto& [k, v] : p.rank_bindings(static_cast<int64_t>(r))) rb[k] = v;
    for (const auto& loop : code_of_[r]->iter_loop) {
      ir::Bindings ib = rb;
      for (const auto& [k, v] : loop) ib[k] = v;
      rank_iter_[r].push_back(std::move(ib));
    }
    rank_base_[r] = std::move(rb);
    auto only_coords = [](const ir::Bindings& b) {
      ir::Bindings o;
      for (const auto& [k, v] : b)
        if (!k.empty() && k[0] == '$') o.emplace_hint(o.end(), k, v);
      return o;
    };
    rank_coords_[r] = only_coords(rank_base_[r]);
    for (const auto& ib : rank_iter_[r]) rank_iter_coords_[r].push_back(only_coords(ib));
    const auto base = static_cast<int32_t>(first[r]);
    const Layout& L = layout.at(prog->name);
    std::vector<int32_t>& store = rank_deps_[r];
    store.reserve(L.deps);  // exactly: the spans below stay valid
    for (size_t j = 0; j < L.nodes.size(); ++j) {
      const TNode& t = L.nodes[j];
      Node& nd = nodes_[first[r] + j];
      const size_t at = store.size();
      for (int32_t d : t.deps) store.push_back(d + base);
      nd = Node{static_cast<int32_t>(r), t.instr, t.result, t.name, std::span<const int32_t>(store.data() + at, t.deps.size()),
                -1, 0, {}};
      if (t.placements) nd.placements = std::span<const uint32_t>(*t.placements);
    }
  });
  using Key = std::tuple<int64_t, int64_t, int64_t>;  // (src, dst, tag)
  std::map<Key, std::vector<int32_t>> sent, recvd;
  struct Member {
    int64_t pos;
    int32_t node, operand;
  };
  std::map<std::pair<std::vector<int64_t>, size_t>, std::vector<Member>> colls;
  std::map<std::pair<int64_t, std::vector<int64_t>>, size_t> coll_count;  // per rank and group
  // Members of each group along axes, built once per group (ir::Mesh::off_axes).
  std::map<std::pair<const ir::Strings*, ir::Coord>, std::vector<int64_t>> axis_groups;
  for (int64_t r = 0; r < n; ++r) {
    const ir::Program* prog = prog_of_[static_cast<size_t>(r)];
    if (!prog) continue;
    const Code& pcode = *code_of_[static_cast<size_t>(r)];
    const auto base = static_cast<int32_t>(first[static_cast<size_t>(r)]);
    for (const TEvent& ev : layout.at(prog->name).events) {
      const ir::Op& op = *pcode.instrs[ev.instr].op;
      const ir::Bindings& b = rank_iter_[static_cast<size_t>(r)][static_cast<size_t>(pcode.iter[ev.instr])];
      auto peer = [&]() {
        ir::Coord c = p.mesh.coord_of(r);
        for (const auto& [axis, e] : std::get<ir::Coords>(*op.attr("peer"))) c[*p.mesh.axis_index(axis)] = e.eval(b);
        return p.mesh.rank_of(c);
      };
      if (ev.kind == Ev::send) {
        sent[{r, peer(), std::get<ir::DimExpr>(*op.attr("tag")).eval(b)}].push_back(base + ev.operand);
      } else if (ev.kind == Ev::recv) {
        recvd[{peer(), r, std::get<ir::DimExpr>(*op.attr("tag")).eval(b)}].push_back(base + ev.node);
      } else {
        std::vector<int64_t> g;
        if (const ir::Attr* a = op.attr("axes"); a && std::holds_alternative<ir::Strings>(*a)) {
          const ir::Strings& axes = std::get<ir::Strings>(*a);
          auto [it, fresh] = axis_groups.try_emplace({&axes, p.mesh.off_axes(r, axes)});
          if (fresh) it->second = p.mesh.group_along(r, axes);
          g = it->second;
        } else {
          for (const auto& grp : std::get<ir::Groups>(*op.attr("groups")))
            if (std::find(grp.begin(), grp.end(), r) != grp.end()) g = grp;
        }
        if (g.empty()) throw ir::EvalError("rank in no group");
        int64_t pos = std::find(g.begin(), g.end(), r) - g.begin();
        size_t k = coll_count[{r, g}]++;
        colls[{g, k}].push_back(Member{pos, base + ev.node, base + ev.operand});
      }
    }
  }
  for (auto& [key, rs] : recvd) {
    auto it = sent.find(key);
    if (it == sent.end() || it->second.size() != rs.size()) throw ir::EvalError("unmatched send/recv");
    for (size_t i = 0; i < rs.size(); ++i) nodes_[static_cast<size_t>(rs[i])].deps = keep_deps({it->second[i]});
  }
  int32_t inst = 0;
  for (auto& [key, ms] : colls) {
    std::sort(ms.begin(), ms.end(), [](const Member& a, const Member& b) { return a.pos < b.pos; });
    if (ms.size() != key.first.size())
      throw ir::EvalError("collective '" + *nodes_[static_cast<size_t>(ms[0].node)].name + "' has " +
                          std::to_string(ms.size()) + " of " + std::to_string(key.first.size()) + " members");
    std::vector<int32_t> ops;
    for (const auto& m : ms) ops.push_back(m.operand);
    const std::span<const int32_t> shared = keep_deps(std::move(ops));
    for (const auto& m : ms) {
      Node& nd = nodes_[static_cast<size_t>(m.node)];
      nd.deps = shared;
      nd.coll = inst;
      nd.member = static_cast<int32_t>(m.pos);
    }
    ++inst;
  }
  collectives_ = static_cast<size_t>(inst);
  for (size_t i = 0; i < nodes_.size(); ++i)
    for (uint32_t pl : nodes_[i].placements) placed_on_[p.placements[pl].spec_value].push_back(static_cast<int32_t>(i));
}

void StageGraph::build_stages() {
  const ir::Plan& p = c_.plan;
  cut_.assign(nodes_.size(), 0);
  placement_spec_node_.clear();
  placement_region_key_.clear();
  placement_region_class_.clear();
  partial_ordinal_ = ir::partial_ordinals(p);
  std::map<std::pair<std::vector<const void*>, std::vector<std::string>>, uint32_t> classes;
  ir::Bindings shared = dims_;
  for (const auto& a : p.mesh.axes) shared[a.name] = a.size;
  std::unordered_map<const void*, ir::DimExpr> bound_memo;  // by expression tree: readers share equal texts
  for (const auto& pl : p.placements) {
    int32_t z = spec_node_of_.at(pl.spec_value);
    cut_[static_cast<size_t>(z)] = 1;
    placement_spec_node_.push_back(z);
    bool fixed = true;
    for (const auto& rg : pl.region) fixed = fixed && !has_coord(rg.offset) && !has_coord(rg.size);
    std::vector<ir::Range> bound;
    auto bind = [&](const ir::DimExpr& e) -> const ir::DimExpr& {
      auto it = bound_memo.find(e.id());
      if (it == bound_memo.end()) it = bound_memo.emplace(e.id(), e.bind(shared)).first;
      return it->second;
    };
    for (const auto& rg : pl.region) bound.push_back(ir::Range{bind(rg.offset), bind(rg.size)});
    std::optional<std::string> k;
    if (fixed) append_region_key(k.emplace(), bound, pl.axes, shared);
    placement_region_key_.push_back(std::move(k));
    std::vector<const void*> ids;
    for (const auto& rg : bound) ids.insert(ids.end(), {rg.offset.id(), rg.size.id()});
    placement_region_class_.push_back(
        classes.try_emplace({std::move(ids), pl.axes}, static_cast<uint32_t>(classes.size()))
            .first->second);
    placement_region_.push_back(std::move(bound));
  }
  // Spec nodes come first: one entry each.
  spec_type_key_.assign(spec_node_of_.size(), std::string());
  for (const auto& [name, id] : spec_node_of_) {
    std::string& k = spec_type_key_[static_cast<size_t>(id)];
    if (auto it = spec_types_.find(name); it != spec_types_.end()) {
      k += ir::dtype_name(it->second.dtype);
      for (const auto& d : it->second.shape) {
        k += ',';
        put_expr(k, d, dims_);
      }
    } else {
      k += '?';
    }
  }
  std::vector<std::pair<int32_t, std::string>> order;
  for (const auto& [y, ns] : placed_on_)
    if (!assumed_ || !assumed_->count(y) || (open_ && open_->count(y)))
      order.push_back({spec_node_of_.at(y), y});
  std::sort(order.begin(), order.end());
  // Stages only read the node graph: they are sliced and keyed on every core,
  // each thread taking the next spec value, and kept in spec order.
  // Stages re-run what they share; when placements are too sparse to cut at
  // (e.g. none inside a loop), that is the whole plan many times over: stop
  // as soon as the slices grow past that.
  size_t plan_nodes = 0;
  for (const auto& nd : nodes_) plan_nodes += nd.rank >= 0;
  std::atomic<size_t> sliced{0};
  std::vector<std::optional<Stage>> built(order.size());
  size_t threads = threads_ ? threads_ : ir::hardware_threads();
  ir::parallel_for(order.size(), std::min(threads, (order.size() + 63) / 64), [&](size_t i) {
    const std::string& y = order[i].second;
    const PlacedValues* only = nullptr;
    if (assumed_ && assumed_->count(y)) only = &open_->at(y);
    built[i] = make_stage(order[i].first, y, only);
    size_t total = built[i] ? sliced += built[i]->plan_nodes.size() : sliced.load();
    if (total > 4 * plan_nodes + 1000)
      throw ir::EvalError("the placements are too sparse to cut the plan into stages (stages would re-run over " +
                          std::to_string(total) + " of " + std::to_string(plan_nodes) + " instances)");
  });
  for (auto& s : built)
    if (s) stages_.push_back(std::move(*s));
}

namespace {
// Sets of node ids for one slice, by generation stamps over all nodes: a
// slice touches few nodes of many, and clearing is a counter increment.
// One per thread and purpose.
class NodeSet {
 public:
  void reset(size_t n) {
    if (stamp_.size() != n) stamp_.assign(n, 0), gen_ = 0;
    if (++gen_ == 0) std::fill(stamp_.begin(), stamp_.end(), 0), gen_ = 1;
  }
  // Whether `id` was new.
  bool insert(int32_t id) {
    uint32_t& s = stamp_[static_cast<size_t>(id)];
    if (s == gen_) return false;
    s = gen_;
    return true;
  }

 private:
  std::vector<uint32_t> stamp_;
  uint32_t gen_ = 0;
};

// Node id -> its number in order of addition, cleared like NodeSet.
class LocalIndex {
 public:
  void reset(size_t n) {
    if (stamp_.size() != n) stamp_.assign(n, 0), local_.assign(n, 0), gen_ = 0;
    if (++gen_ == 0) std::fill(stamp_.begin(), stamp_.end(), 0), gen_ = 1;
    count_ = 0;
  }
  // A node added twice (a placed member read by another member: a seed and
  // an obligation) keeps its first number.
  void add(int32_t id) {
    if (stamp_[static_cast<size_t>(id)] == gen_) return;
    stamp_[static_cast<size_t>(id)] = gen_;
    local_[static_cast<size_t>(id)] = count_++;
  }
  // Its number, adding it first when new.
  int64_t number(int32_t id) {
    add(id);
    return local_[static_cast<size_t>(id)];
  }
  // -1 when `id` was not added.
  int64_t find(int32_t id) const {
    return stamp_[static_cast<size_t>(id)] == gen_ ? local_[static_cast<size_t>(id)] : -1;
  }
  int64_t at(int32_t id) const {
    int64_t v = find(id);
    if (v < 0) throw std::out_of_range("stage key: a node outside the stage");
    return v;
  }

 private:
  std::vector<uint32_t> stamp_;
  std::vector<int64_t> local_;
  uint32_t gen_ = 0;
  int64_t count_ = 0;
};
}  // namespace

std::optional<Stage> StageGraph::make_stage(int32_t sid, const std::string& y,
                                            const PlacedValues* only) const {
  const ir::Plan& p = c_.plan;
  Stage s;
  s.spec_value = y;
  s.spec_node = sid;
  thread_local NodeSet seen, pseen, pin, targets, spec_have;
  for (NodeSet* ns : {&seen, &pseen, &pin, &targets, &spec_have}) ns->reset(nodes_.size());
  // Spec slice.
  // Post-order walks with a stack of their own: an unplaced chain can be as
  // long as a loop has iterations (131072 microbatches), past any call stack.
  std::vector<std::pair<int32_t, size_t>> stack;  // node, next dep
  auto post_order = [&](int32_t start, auto&& enter, std::vector<int32_t>& out) {
    if (!enter(start, true)) return;
    stack.assign(1, {start, 0});
    while (!stack.empty()) {
      const int32_t id = stack.back().first;
      const Node& nd = nodes_[static_cast<size_t>(id)];
      if (stack.back().second < nd.deps.size()) {
        const int32_t d = nd.deps[stack.back().second++];
        if (enter(d, false)) stack.emplace_back(d, 0);
      } else {
        out.push_back(id);
        stack.pop_back();
      }
    }
  };
  // Spec slice: whether a node is expanded (else it is an input or seen).
  auto spec_enter = [&](int32_t id, bool root) {
    if (!seen.insert(id)) return false;
    const Node& nd = nodes_[static_cast<size_t>(id)];
    if (nd.instr < 0 || (!root && cut_[static_cast<size_t>(id)])) {
      s.spec_inputs.push_back(id);
      return false;
    }
    return true;
  };
  if (only) {
    // An open stage: the spec value is free, whatever computes it.
    seen.insert(sid);
    s.spec_inputs.push_back(sid);
  } else {
    post_order(sid, spec_enter, s.spec_nodes);
  }
  // Obligations.
  // The region is part of the key: one rank may place two partial sums on
  // two regions of one spec value (balanced context-parallel chunks).
  // So is which of its program's partial placements of the region it is
  // (ir::partial_ordinals): two values placed as partials of one region are
  // two sums.
  using PKey = std::tuple<std::vector<std::string>, std::string, std::vector<int64_t>, std::vector<int64_t>, uint32_t>;
  std::map<PKey, size_t> partial_at;
  for (int32_t id : placed_on_.at(y)) {
    const Node& nd = nodes_[static_cast<size_t>(id)];
    for (uint32_t pl : nd.placements) {
      const ir::Placement& P = p.placements[pl];
      if (P.spec_value != y) continue;
      if (only && !only->count({P.program, P.value})) continue;
      // An input's first placement is how it is seeded: nothing to prove.
      if (nd.instr < 0 && pl == nd.placements[0]) continue;
      if (P.kind == ir::PlacementKind::region) {
        s.obligations.push_back(Obligation{pl, {id}});
        continue;
      }
      ir::Coord c = p.mesh.coord_of(nd.rank);
      for (const auto& a : P.axes) c[*p.mesh.axis_index(a)] = -1;
      std::vector<std::string> axes = P.axes;
      std::sort(axes.begin(), axes.end());
      std::vector<int64_t> off;
      const ir::Bindings& b = coords(nd);
      for (const auto& d : placement_region_[pl]) off.push_back(d.offset.eval(b));
      PKey k{axes, nd.instr >= 0 ? instr(nd).iter : "", c, off, partial_ordinal_[pl]};
      auto it = partial_at.find(k);
      if (it == partial_at.end()) {
        partial_at[k] = s.obligations.size();
        s.obligations.push_back(Obligation{pl, {id}});
      } else {
        s.obligations[it->second].members.push_back(id);
      }
    }
  }
  if (s.obligations.empty()) return std::nullopt;
  // Plan slice: each member's op, and what it reads back to placed instances.
  auto plan_enter = [&](int32_t id, bool) {
    const Node& nd = nodes_[static_cast<size_t>(id)];
    if (!nd.placements.empty()) {
      if (pin.insert(id)) s.plan_inputs.push_back(id);
      return false;
    }
    if (!pseen.insert(id)) return false;
    if (nd.instr < 0) throw ir::EvalError("an unplaced program input");
    return true;
  };
  for (const auto& o : s.obligations)
    for (int32_t m : o.members) {
      const Node& nd = nodes_[static_cast<size_t>(m)];
      if (nd.instr < 0) {
        if (pin.insert(m)) s.plan_inputs.push_back(m);
        continue;
      }
      if (!targets.insert(m)) continue;
      for (int32_t d : nd.deps) post_order(d, plan_enter, s.plan_nodes);
      s.plan_nodes.push_back(m);
    }
  // Seeds that name spec values outside the slice join its inputs.
  for (int32_t id : s.spec_inputs) spec_have.insert(id);
  for (int32_t id : s.spec_nodes) spec_have.insert(id);
  for (int32_t id : s.plan_inputs) {
    const Node& nd = nodes_[static_cast<size_t>(id)];
    for (uint32_t pl : nd.placements) {
      int32_t z = placement_spec_node_[pl];
      if (spec_have.insert(z)) s.spec_inputs.push_back(z);
    }
  }
  thread_local std::string k;
  key_of(s, k);
  s.key = intern(k);
  return s;
}

void StageGraph::attrs_key(std::string& k, const Node& n) const {
  if (n.instr < 0) {
    k += "in";
    return;
  }
  const AttrKey& t = n.rank < 0 ? spec_attrs_[static_cast<size_t>(n.instr)]
                                : code_of_[static_cast<size_t>(n.rank)]->attrs[static_cast<size_t>(n.instr)];
  if (!t.exprs) k += t.text;
  else append_attrs(k, t, coords(n));
}


const std::string* StageGraph::intern(const std::string& k) const {
  std::lock_guard<std::mutex> lock(keys_mutex_);
  return &*keys_.insert(k).first;
}

// A region class's key text at one instance's coordinates (a binding owned by
// the graph, so its address names it).
struct StageGraph::RegionMemo {
  using At = std::pair<uint32_t, const ir::Bindings*>;  // region class, coordinates
  struct Hash {
    size_t operator()(const At& a) const {
      return std::hash<const void*>{}(a.second) * 31 + a.first;
    }
  };
  std::unordered_map<At, std::string, Hash> text;
};

StageGraph::~StageGraph() = default;

StageGraph::RegionMemo& StageGraph::memo() const {
  std::lock_guard<std::mutex> lock(memos_mutex_);
  auto& m = memos_[std::this_thread::get_id()];
  if (!m) m = std::make_unique<RegionMemo>();
  return *m;
}

void StageGraph::append_region(std::string& k, RegionMemo& memo, uint32_t placement,
                               const ir::Bindings& coords) const {
  auto [it, fresh] = memo.text.try_emplace({placement_region_class_[placement], &coords});
  if (fresh)
    append_region_key(it->second, placement_region_[placement], c_.plan.placements[placement].axes,
                      coords);
  k += it->second;
}

void StageGraph::key_of(const Stage& s, std::string& k) const {
  const ir::Plan& p = c_.plan;
  // Local numbering of nodes, ranks and collective instances in order of
  // first appearance; reused across the stages a thread keys.
  thread_local LocalIndex spec_local, plan_local;
  spec_local.reset(nodes_.size());
  plan_local.reset(nodes_.size());
  // Ranks and collective instances numbered the same way.
  thread_local LocalIndex rank_local, coll_local;
  rank_local.reset(static_cast<size_t>(p.mesh.num_ranks()));
  coll_local.reset(collectives_);
  auto rk = [&](int32_t r) { return rank_local.number(r); };
  k.clear();
  k += 'S';
  auto spec_type = [&](int32_t id) { k += spec_type_key_[static_cast<size_t>(id)]; };
  for (int32_t id : s.spec_inputs) {
    spec_local.add(id);
    const Node& nd = nodes_[static_cast<size_t>(id)];
    k += 'i';
    spec_type(id);
    k += nd.instr < 0 ? 'g' : 'c';
    if (id == s.spec_node) k += 'y';
    k += '|';
  }
  for (int32_t id : s.spec_nodes) {
    spec_local.add(id);
    const Node& nd = nodes_[static_cast<size_t>(id)];
    const bool copy = nd.instr >= 0 && spec_code_[static_cast<size_t>(nd.instr)].kind == ir::Instr::bind;
    k += 'o';
    attrs_key(k, nd);
    if (!copy) {
      k += '#';
      put(k, nd.result);
    }
    k += '(';
    for (int32_t d : nd.deps) {
      put(k, spec_local.at(d));
      k += ',';
    }
    k += ')';
    if (id == s.spec_node) k += 'y';
    k += '|';
  }
  RegionMemo& regions = memo();
  auto region_key = [&](const ir::Placement& P, const ir::Bindings& b) {
    const auto idx = static_cast<size_t>(&P - p.placements.data());
    k += ir::placement_kind_name(P.kind);
    if (const uint32_t o = partial_ordinal_[idx]) {
      k += '#';
      put(k, o);
    }
    k += '@';
    put(k, spec_local.at(placement_spec_node_[idx]));
    if (const auto& fixed = placement_region_key_[idx]) k += *fixed;
    else
      append_region(k, regions, static_cast<uint32_t>(idx), b);
  };
  k += 'P';
  for (int32_t id : s.plan_inputs) {
    plan_local.add(id);
    const Node& nd = nodes_[static_cast<size_t>(id)];
    const ir::Bindings& b = coords(nd);
    k += 'i';
    put(k, rk(nd.rank));
    k += ':';
    for (uint32_t pl : nd.placements) {
      region_key(p.placements[pl], b);
      k += ';';
    }
    // Partial seeds sum over ranks: where this rank sits matters.
    bool partial = false;
    for (uint32_t pl : nd.placements)
      for (const auto& a : p.placements[pl].axes) {
        if (!partial) partial = true;
        k += 'c';
        put(k, p.mesh.coord_of(nd.rank)[*p.mesh.axis_index(a)]);
      }
    if (partial && nd.instr >= 0) {
      k += "it";
      k += instr(nd).iter;
    }
    k += '|';
  }
  for (int32_t id : s.plan_nodes) {
    const Node& nd = nodes_[static_cast<size_t>(id)];
    // A bind copies its operand; which carry slot it fills is bookkeeping.
    const bool copy = nd.instr >= 0 && instr(nd).kind == ir::Instr::bind;
    // A seed that is also computed here (an obligation member another member
    // reads) keeps the number it has as an input, and says which: numbers
    // are otherwise implied by the order of entries, and an entry that takes
    // none must be told apart from one that does.
    if (int64_t seeded = plan_local.find(id); seeded >= 0) {
      k += 'N';
      put(k, seeded);
      k += ':';
    } else {
      plan_local.add(id);
      k += 'n';
    }
    put(k, rk(nd.rank));
    attrs_key(k, nd);
    if (!copy) {
      k += '#';
      put(k, nd.result);
    }
    if (nd.coll >= 0) {
      k += 'c';
      put(k, coll_local.number(nd.coll));
      k += 'm';
      put(k, nd.member);
    }
    k += '(';
    for (int32_t d : nd.deps) {
      // Collective operands of members outside the slice are still inputs.
      int64_t local = plan_local.find(d);
      if (local < 0) k += '?';
      else put(k, local);
      k += ',';
    }
    k += ")|";
  }
  k += 'O';
  for (const auto& o : s.obligations) {
    const Node& first = nodes_[static_cast<size_t>(o.members[0])];
    region_key(p.placements[o.placement], coords(first));
    k += '(';
    for (int32_t m : o.members) {
      put(k, plan_local.at(m));
      k += ',';
    }
    k += ")|";
  }
}

}  // namespace parity::reduce
