#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/coverage.h"
#include "ir/parallel.h"
#include "ir/validate.h"

namespace parity::ir {

namespace {
// `d` placed where `x` (an op, a placement, a program, the spec) is written, naming `check`.
template <class X>
Diag at(const X& x, const char* check, Diag d) {
  if (x.line > 0) d.line = x.line, d.col = x.col;
  d.check = check;
  return d;
}
}  // namespace

void validate_spec(const Spec& s, const std::string& file, DiagList& out, TypeMap* types) {
  Diag where{file, "(spec)", "", "", ""};
  where.line = s.line, where.col = s.col;
  auto fail = [&](const std::string& msg) {
    Diag d = where;
    d.message = msg;
    d.check = "spec";
    out.add(d);
  };
  if (s.graph.outputs.empty()) fail("the spec has no outputs");
  TypeMap t = check_graph(s.graph, s.dims, nullptr, where, out);
  std::set<std::string> io(s.graph.inputs.begin(), s.graph.inputs.end());
  io.insert(s.graph.outputs.begin(), s.graph.outputs.end());
  for (const auto& [v, r] : s.roles)
    if (!io.count(v)) fail("role '" + std::string(role_name(r)) + "' given to '" + v + "', which is not a spec input or output");
  if (types) *types = std::move(t);
}

namespace {

// Loop variables of a program with their counts (`mb` -> M).
void loop_vars(const Graph& g, const Bindings& b, std::map<std::string, int64_t>& out) {
  for (const auto& op : g.ops) {
    if (op.kind != "loop") continue;
    int64_t n = 0;
    std::get<DimExpr>(*op.attr("count")).try_eval(b, n);
    out[std::get<std::string>(*op.attr("var"))] = n;
    for (const auto& r : op.regions) loop_vars(r, b, out);
  }
}

// Bindings of every `$` symbol in `exprs` over the mesh and the program's loop
// indices (placements are rank-parametric and may be per microbatch).
// `b` holds the base bindings; the `$` symbols are set in it for each call and
// removed afterwards (one copy for all placements rather than one each).
void for_each_rank_binding(const Plan& p, const RankSel* sel, const std::map<std::string, int64_t>& loops,
                           const std::vector<DimExpr>& exprs, Bindings& b,
                           const std::function<void(const Bindings&)>& fn) {
  std::set<std::string> syms;
  for (const auto& e : exprs) e.symbols(syms);
  // (symbol, values to try): every value, or only the two ends when every
  // expression is affine in the symbol (checks over a box of coordinates
  // then hold everywhere iff they hold at its corners: a multi-affine
  // function is the interpolation of its corner values).
  std::vector<std::pair<std::string, std::vector<int64_t>>> ranges;
  for (const auto& s : syms)
    if (!s.empty() && s[0] == '$') {
      int64_t n = -1;
      if (auto i = p.mesh.axis_index(s.substr(1))) n = p.mesh.axes[*i].size;
      else if (auto l = loops.find(s.substr(1)); l != loops.end()) n = l->second;
      if (n < 1) continue;
      bool affine = true;
      for (const auto& e : exprs) affine &= e.degree_in(s) <= 1;
      // Only the coordinates the program runs on (a short last rank's own
      // program places its rows at another offset than the others').
      std::vector<int64_t> all;
      const std::vector<int64_t>* only = nullptr;
      if (sel)
        if (auto f = sel->fixed.find(s.substr(1)); f != sel->fixed.end()) only = &f->second;
      if (only) {
        for (int64_t v : *only)
          if (v >= 0 && v < n) all.push_back(v);
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
      } else {
        for (int64_t v = 0; v < n; ++v) all.push_back(v);
      }
      if (all.empty()) continue;
      std::vector<int64_t> vals;
      if (affine) {
        vals.push_back(all.front());
        if (all.size() > 1) vals.push_back(all.back());
      } else {
        vals = all;
      }
      ranges.push_back({s, vals});
    }
  std::function<void(size_t)> rec = [&](size_t k) {
    if (k == ranges.size()) return fn(b);
    for (int64_t v : ranges[k].second) {
      b[ranges[k].first] = v;
      rec(k + 1);
    }
  };
  // Put back what the base held for these symbols (nothing, unless a dim is named like a coordinate).
  std::vector<std::optional<int64_t>> saved;
  for (const auto& [s, vals] : ranges) {
    auto it = b.find(s);
    saved.push_back(it == b.end() ? std::nullopt : std::optional<int64_t>(it->second));
  }
  rec(0);
  for (size_t k = 0; k < ranges.size(); ++k) {
    if (saved[k]) b[ranges[k].first] = *saved[k];
    else b.erase(ranges[k].first);
  }
}

std::string coord_str(const Bindings& b) {
  std::string s;
  for (const auto& [k, v] : b)
    if (!k.empty() && k[0] == '$') s += (s.empty() ? "" : ",") + k.substr(1) + "=" + std::to_string(v);
  return s;
}

std::string group_str(const Plan& p, const std::vector<int64_t>& g) {
  std::string s = "{";
  for (size_t i = 0; i < g.size(); ++i) s += (i ? ", " : "") + p.mesh.rank_str(g[i]);
  return s + "}";
}

// The collectives of every program that name explicit groups: group (as
// listed) -> program -> the first such op, for matching across programs.
using GroupIndex = std::map<std::vector<int64_t>, std::map<const Program*, const Op*>>;

void index_groups(const Program& prog, const Graph& g, GroupIndex& idx) {
  for (const auto& op : g.ops) {
    for (const auto& r : op.regions) index_groups(prog, r, idx);
    const Attr* a = op.attr("groups");
    if (!a || !std::holds_alternative<Groups>(*a)) continue;
    for (const auto& grp : std::get<Groups>(*a)) idx[grp].emplace(&prog, &op);
  }
}

void check_groups(const Plan& p, const Program& prog, const Graph& g, const GroupIndex& idx,
                  const Diag& where, DiagList& out) {
  for (const auto& op : g.ops) {
    for (const auto& r : op.regions) check_groups(p, prog, r, idx, where, out);
    const Attr* a = op.attr("groups");
    if (!a || !std::holds_alternative<Groups>(*a)) continue;
    // Every rank of this program is in exactly one group. A group may also
    // name ranks of other programs (a tied embedding shared by the first and
    // last pipeline stage): each of those must run a program that issues a
    // collective over the same group (the schedule check then matches the
    // sequences position by position).
    std::map<int64_t, int> seen;
    Diag d = where;
    d.op = op.label();
    if (op.line > 0) d.line = op.line, d.col = op.col;
    d.check = "groups";
    bool bad = false;
    for (const auto& grp : std::get<Groups>(*a)) {
      bool outside = false;
      for (int64_t r : grp) {
        if (r < 0 || r >= p.mesh.num_ranks()) {
          d.message = "group names rank " + std::to_string(r) + ", outside the mesh of " + std::to_string(p.mesh.num_ranks()) + " ranks";
          out.add(d);
          bad = outside = true;
        } else if (!p.program_of(r)) {
          d.message = "group names rank " + p.mesh.rank_str(r) + ", which runs no program";
          out.add(d);
          bad = outside = true;
        } else if (seen[r]++) {
          d.message = "rank " + p.mesh.rank_str(r) + " is in more than one group: the groups are not a partition";
          out.add(d);
          bad = true;
        }
      }
      if (outside) continue;
      for (int64_t r : grp) {
        const Program* other = p.program_of(r);
        if (other == &prog) continue;
        auto it = idx.find(grp);
        if (it != idx.end() && it->second.count(other)) continue;
        // Say whether the other program lists the same ranks in another order.
        std::string hint;
        std::vector<int64_t> sorted = grp;
        std::sort(sorted.begin(), sorted.end());
        for (const auto& [lg, progs] : idx) {
          std::vector<int64_t> s2 = lg;
          std::sort(s2.begin(), s2.end());
          if (s2 == sorted && progs.count(other)) {
            hint = " (its '" + progs.at(other)->label() + "' lists these ranks in another order, " +
                   group_str(p, lg) +
                   "; positions in a group are its list order, so the order must agree)";
            break;
          }
        }
        d.rank = p.mesh.rank_str(r);
        d.message = "member of group " + group_str(p, grp) + " of this " + op.kind +
                    ", but runs program '" + other->name +
                    "', which issues no collective over that group" + hint +
                    ": expected a matching " + op.kind + " over the same group in program '" +
                    other->name + "'";
        out.add(d);
        d.rank.clear();
        bad = true;
        break;
      }
    }
    if (bad) continue;
    for (int64_t r = 0; r < p.mesh.num_ranks(); ++r)
      if (p.program_of(r) == &prog && !seen.count(r)) {
        d.message = "rank " + p.mesh.rank_str(r) + " runs this collective but is in no group: the groups are not a partition";
        out.add(d);
        break;
      }
  }
}

// The addends of a partial sum are one value per rank along its axes. When a
// rank selector reads one of those axes the addends run different programs,
// and each program must place its own (the k-th partial placement of a
// region pairs with the k-th, `partial_ordinals`); otherwise the sum would
// be checked with addends missing.
void check_partial_addends(const Plan& p, const std::string& file, DiagList& out) {
  std::set<std::string> selected;
  for (const auto& prog : p.programs)
    for (const auto& [axis, vals] : prog.ranks.fixed) selected.insert(axis);
  const std::vector<uint32_t> ord = partial_ordinals(p);
  auto key = [&](const std::string& program, const Placement& pl, uint32_t o) {
    return partial_sum_key(program, pl) + '\n' + std::to_string(o);
  };
  std::set<std::string> have;
  for (size_t k = 0; k < p.placements.size(); ++k)
    if (p.placements[k].kind == PlacementKind::partial) have.insert(key(p.placements[k].program, p.placements[k], ord[k]));
  // Per-rank plans are small; a mesh this large is left to the verifier.
  if (have.empty() || p.mesh.num_ranks() > (int64_t{1} << 16)) return;
  std::vector<const Program*> prog_of(static_cast<size_t>(p.mesh.num_ranks()));
  for (int64_t r = 0; r < p.mesh.num_ranks(); ++r) prog_of[static_cast<size_t>(r)] = p.program_of(r);
  for (size_t k = 0; k < p.placements.size(); ++k) {
    const Placement& pl = p.placements[k];
    if (pl.kind != PlacementKind::partial ||
        std::none_of(pl.axes.begin(), pl.axes.end(), [&](const std::string& a) { return selected.count(a) > 0; }) ||
        std::any_of(pl.axes.begin(), pl.axes.end(), [&](const std::string& a) { return !p.mesh.axis_index(a); }))
      continue;
    bool reported = false;
    std::set<Coord> groups_seen;  // coordinates off the axes: each group is walked once, not once per member
    for (int64_t r = 0; r < p.mesh.num_ranks() && !reported; ++r) {
      const Program* prog = prog_of[static_cast<size_t>(r)];
      if (!prog || prog->name != pl.program) continue;
      if (!groups_seen.insert(p.mesh.off_axes(r, pl.axes)).second) continue;
      for (int64_t m : p.mesh.group_along(r, pl.axes)) {
        const Program* other = prog_of[static_cast<size_t>(m)];
        if (other && other->name == pl.program) continue;
        if (other && have.count(key(other->name, pl, ord[k]))) continue;
        out.add(at(pl, "partial-sum", Diag{file, pl.program, "", p.mesh.rank_str(r),
                     "placement of '" + pl.value + "' -> spec '" + pl.spec_value + "' (partial over " +
                         [&] {
                           std::string s;
                           for (const auto& a : pl.axes) s += (s.empty() ? "" : ",") + a;
                           return s;
                         }() +
                         "): rank " + p.mesh.rank_str(m) + ", an addend of the same sum, " +
                         (other ? "runs program '" + other->name + "', which places no partial of '" + pl.spec_value +
                                      "' over those axes with that region"
                                : "runs no program") +
                         "; the sum would miss its addend"}));
        reported = true;
        break;
      }
    }
  }
}

}  // namespace

void validate_plan(const Plan& p, const Spec* spec, const std::string& file, DiagList& out,
                   std::map<std::string, TypeMap>* types_out, size_t threads, TypeMap* spec_types) {
  auto fail = [&](const std::string& prog, const std::string& msg) {
    Diag d{file, prog, "", "", msg};
    if (const Program* x = p.program(prog)) d = at(*x, "plan", d);
    d.check = "plan";
    out.add(d);
  };
  std::set<std::string> axes;
  for (const auto& a : p.mesh.axes) {
    if (a.name.empty() || !axes.insert(a.name).second) fail("", "mesh axis names must be unique and non-empty ('" + a.name + "')");
    if (a.size < 1) fail("", "mesh axis '" + a.name + "' has size " + std::to_string(a.size) + ", expected >= 1");
    if (p.dims.count(a.name)) fail("", "'" + a.name + "' is both a mesh axis and a dim symbol");
  }
  if (!out.empty()) return;
  if (p.programs.empty()) fail("", "the plan has no programs");

  std::set<std::string> names;
  for (const auto& prog : p.programs) {
    if (!names.insert(prog.name).second) fail(prog.name, "program name used twice");
    for (const auto& [axis, vals] : prog.ranks.fixed) {
      auto i = p.mesh.axis_index(axis);
      if (!i) {
        fail(prog.name, "rank selector names unknown mesh axis '" + axis + "'");
        continue;
      }
      for (int64_t v : vals)
        if (v < 0 || v >= p.mesh.axes[*i].size)
          fail(prog.name, "rank selector " + axis + "=" + std::to_string(v) + " is outside the axis (size " +
                              std::to_string(p.mesh.axes[*i].size) + ")");
    }
  }
  if (!out.empty()) return;
  // Every rank runs at most one program.
  for (int64_t r = 0; r < p.mesh.num_ranks(); ++r) {
    Coord c = p.mesh.coord_of(r);
    const Program* first = nullptr;
    for (const auto& prog : p.programs)
      if (prog.ranks.contains(p.mesh, c)) {
        if (first) {
          out.add(at(prog, "rank-selector", Diag{file, prog.name, "", p.mesh.rank_str(r), "rank is selected by programs '" + first->name + "' and '" + prog.name + "'"}));
          return;
        }
        first = &prog;
      }
  }

  Bindings b = p.dims;
  for (const auto& a : p.mesh.axes) b[a.name] = a.size;
  std::map<std::string, TypeMap> types;
  GroupIndex groups;
  for (const auto& prog : p.programs) index_groups(prog, prog.graph, groups);
  // Programs and the spec are checked independently, on every core; their
  // messages are kept in program order, then the spec's.
  const size_t tasks = p.programs.size() + (spec ? 1 : 0);
  std::vector<DiagList> diags(tasks);
  std::vector<TypeMap> prog_types(p.programs.size());
  TypeMap st;
  // The spec, usually the largest task, starts first.
  parallel_for(tasks, threads ? threads : hardware_threads(), [&](size_t t) {
    size_t i = spec ? (t == 0 ? p.programs.size() : t - 1) : t;
    if (i == p.programs.size()) {
      validate_spec(*spec, file, diags[i], &st);
      return;
    }
    const Program& prog = p.programs[i];
    Diag where{file, prog.name, "", "", ""};
    where.line = prog.line, where.col = prog.col;
    prog_types[i] = check_graph(prog.graph, b, &p.mesh, where, diags[i]);
    check_groups(p, prog, prog.graph, groups, where, diags[i]);
  });
  for (auto& d : diags)
    for (auto& item : d.items) out.add(std::move(item));
  for (size_t i = 0; i < p.programs.size(); ++i) types[p.programs[i].name] = std::move(prog_types[i]);
  // Placements.
  if (spec) {
    for (const auto& [k, v] : p.dims)
      if (auto it = spec->dims.find(k); it != spec->dims.end() && it->second != v)
        fail("", "dim " + k + " is " + std::to_string(it->second) + " in the spec but " + std::to_string(v) + " in the plan");
  }
  // A program that failed to check would only add echoes of its errors below.
  std::set<std::string> broken;
  for (const auto& d : out.items) broken.insert(d.program);
  std::set<std::pair<std::string, std::string>> placed;
  std::set<std::string> spec_covered;
  std::map<std::string, std::map<std::string, int64_t>> loops_of;
  Bindings spec_b = b;
  if (spec)
    for (const auto& [k, v] : spec->dims)
      if (!spec_b.count(k)) spec_b[k] = v;
  // Regions are evaluated at many coordinates: the dims are bound into them
  // first (`DimExpr::bind`), and the coordinates looked up in a map of their own.
  Bindings dims_only, scratch;  // scratch: the `$` symbols, those of one placement set at a time
  for (const auto& [k, v] : spec_b) (k.empty() || k[0] != '$' ? dims_only : scratch).emplace(k, v);
  std::unordered_map<const void*, DimExpr> bound_memo;  // the placements' region expressions keep their trees alive
  for (const auto& pl : p.placements) {
    const Diag d = at(pl, "placement", Diag{file, pl.program, "", "", ""});
    auto err = [&](const std::string& m) {
      Diag e = d;
      e.message = "placement of '" + pl.value + "' -> spec '" + pl.spec_value + "': " + m;
      out.add(e);
    };
    if (broken.count(pl.program)) continue;
    auto pt = types.find(pl.program);
    if (pt == types.end()) {
      err("no program named '" + pl.program + "'");
      continue;
    }
    auto vt = pt->second.find(pl.value);
    if (vt == pt->second.end()) {
      err("the program has no value '" + pl.value + "'");
      continue;
    }
    placed.insert({pl.program, pl.value});
    for (const auto& a : pl.axes)
      if (!p.mesh.axis_index(a)) err("partial over unknown mesh axis '" + a + "'");
    if (pl.kind == PlacementKind::partial && pl.axes.empty()) err("a partial placement names no mesh axes");
    if (!spec) continue;
    auto sv = st.find(pl.spec_value);
    if (sv == st.end()) {
      err("the spec has no value '" + pl.spec_value + "'");
      continue;
    }
    spec_covered.insert(pl.spec_value);
    const TensorType& spec_t = sv->second;
    const TensorType& plan_t = vt->second;
    if (plan_t.rank() != spec_t.rank()) {
      err("plan value has rank " + std::to_string(plan_t.rank()) + ", spec value rank " + std::to_string(spec_t.rank()));
      continue;
    }
    // Precision may differ (a bf16 plan of an f32 spec); the kind may not:
    // ids, labels and masks are placed on integer values, numbers on floats.
    if (is_float(plan_t.dtype) != is_float(spec_t.dtype) ||
        (!is_float(plan_t.dtype) && plan_t.dtype != spec_t.dtype)) {
      err(std::string("plan value is ") + dtype_name(plan_t.dtype) + ", spec value " + dtype_name(spec_t.dtype) +
          ": integer values (ids, labels, masks) are placed on integer values of the same dtype, numbers on floats");
      continue;
    }
    if (const Program* prog = p.program(pl.program)) {
      const auto& pin = prog->graph.inputs;
      const auto& sin = spec->graph.inputs;
      if (std::find(pin.begin(), pin.end(), pl.value) != pin.end() &&
          std::find(sin.begin(), sin.end(), pl.spec_value) == sin.end()) {
        err("'" + pl.value + "' is an input of the program and '" + pl.spec_value +
            "' is not an input of the spec: a program input is given from a spec input");
        continue;
      }
    }
    if (!pl.region.empty() && pl.region.size() != spec_t.rank()) {
      err("region has " + std::to_string(pl.region.size()) + " ranges for a rank-" + std::to_string(spec_t.rank()) + " tensor");
      continue;
    }
    std::vector<DimExpr> exprs;  // offset and size of each range, dims bound
    auto bound = [&](const DimExpr& e) -> const DimExpr& {
      auto it = bound_memo.find(e.id());
      if (it == bound_memo.end()) it = bound_memo.emplace(e.id(), e.bind(dims_only)).first;
      return it->second;
    };
    for (const auto& r : pl.region) {
      exprs.push_back(bound(r.offset));
      exprs.push_back(bound(r.size));
    }
    const Bindings& sb = spec_b;
    std::vector<int64_t> extents, plan_extents;
    try {
      for (size_t k = 0; k < spec_t.rank(); ++k) {
        extents.push_back(spec_t.shape[k].eval(sb));
        plan_extents.push_back(plan_t.shape[k].eval(sb));
      }
    } catch (const std::exception& e) {
      // A type the spec's or program's own check has reported already.
      err(std::string("its type cannot be evaluated: ") + e.what());
      continue;
    }
    bool reported = false;
    // Loop indices per program, found once (a plan has thousands of placements).
    auto lv = loops_of.find(pl.program);
    if (lv == loops_of.end()) {
      lv = loops_of.emplace(pl.program, std::map<std::string, int64_t>{}).first;
      loop_vars(p.program(pl.program)->graph, sb, lv->second);
    }
    const std::map<std::string, int64_t>& loops = lv->second;
    const Program* owner = p.program(pl.program);
    for_each_rank_binding(p, owner ? &owner->ranks : nullptr, loops, exprs, scratch, [&](const Bindings& rb) {
      for (size_t k = 0; k < spec_t.rank() && !reported; ++k) {
        int64_t extent = extents[k], plan_extent = plan_extents[k];
        int64_t off = 0, size = extent;
        if (!pl.region.empty()) {
          if (!exprs[2 * k].try_eval(rb, off) || !exprs[2 * k + 1].try_eval(rb, size)) {
            std::string why;
            try {
              exprs[2 * k].eval(rb);
              exprs[2 * k + 1].eval(rb);
            } catch (const std::exception& e) {
              why = std::string(": ") + e.what();  // the unbound symbol (`$dp` on a mesh without dp), or the division
            }
            const std::string at = coord_str(rb);
            err("cannot evaluate range " + std::to_string(k) + " (" + pl.region[k].offset.str() + ", " + pl.region[k].size.str() +
                ")" + (at.empty() ? "" : " at " + at) + why);
            reported = true;
            return;
          }
        }
        if (off < 0 || size < 1 || off + size > extent) {
          err("region [" + std::to_string(off) + ", " + std::to_string(off + size) + ") of dim " + std::to_string(k) +
              " is out of bounds (spec dim " + spec_t.shape[k].str() + " = " + std::to_string(extent) + ")" +
              (coord_str(rb).empty() ? "" : " at " + coord_str(rb)));
          reported = true;
        } else if (size != plan_extent) {
          err("region size " + std::to_string(size) + " of dim " + std::to_string(k) + " differs from the plan value's dim " +
              plan_t.shape[k].str() + " = " + std::to_string(plan_extent));
          reported = true;
        }
      }
    });
  }
  // Plan inputs need lineage; spec outputs need a producer.
  for (const auto& prog : p.programs)
    for (const auto& in : prog.graph.inputs)
      if (!broken.count(prog.name) && !placed.count({prog.name, in}))
        out.add(at(prog, "placement",
                   Diag{file, prog.name, "", "", "program input '" + in + "' has no placement (which spec tensor does it hold?)"}));
  // A program output left unplaced is never compared with the spec: a
  // returned copy of a parameter that drifts from the spec's update (the
  // last pipeline stage's copy of a shared embedding updated with only its
  // own gradient, under a name of its own) would pass unseen. Where another
  // program places a value of that name, that is said too (ZeRO-1 written
  // one program per rank, one of which returns its stale parameter).
  if (broken.empty()) {
    std::map<std::string, const Placement*> placed_by_name;
    for (const auto& pl : p.placements) placed_by_name.emplace(pl.value, &pl);
    for (const auto& prog : p.programs)
      for (const auto& o : prog.graph.outputs) {
        if (placed.count({prog.name, o})) continue;
        auto it = placed_by_name.find(o);
        out.add(at(prog, "placement", Diag{file, prog.name, "", "",
                     it == placed_by_name.end()
                         ? "program output '" + o +
                               "' has no placement: it would never be compared with the spec (place it on the spec "
                               "value it holds, or drop it from the outputs)"
                         : "program output '" + o + "' has no placement, while program " + it->second->program +
                               " places its '" + o + "' on spec '" + it->second->spec_value +
                               "': this program's copy would never be compared (place it, or drop it from the "
                               "outputs)"}));
      }
  }
  if (broken.empty()) check_partial_addends(p, file, out);
  if (spec && broken.empty())
    for (const auto& o : spec->graph.outputs)
      if (!spec_covered.count(o))
        out.add(at(*spec, "coverage",
                   Diag{file, "", "", "", "spec output '" + o + "' is not placed on any plan value: the plan never produces it"}));
  // Placed, but with rows no rank's placement reaches at these sizes (regions
  // of 6/tp rows where F = 8 tile only at F = 6): checked here, at the sizes
  // as given, not only on the instance verify proves.
  if (spec && out.empty())
    if (auto gap = output_coverage_gap(p, *spec, st, spec_b, loops_of))
      out.add(at(*spec, "coverage", Diag{file, "", "", "", gap->message, gap->output}));
  if (types_out) *types_out = std::move(types);
  if (spec_types) *spec_types = std::move(st);
}

DiagList validate_case(const Case& c, const std::string& file, size_t schedule_budget, size_t threads,
                       TypeMap* spec_types, std::map<std::string, TypeMap>* program_types) {
  DiagList out;
  if (c.plan.programs.empty() && c.plan.mesh.axes.empty()) {
    if (c.spec) validate_spec(*c.spec, file, out, spec_types);
    return out;
  }
  std::map<std::string, TypeMap> types;
  validate_plan(c.plan, c.spec ? &*c.spec : nullptr, file, out, &types, threads, spec_types);
  if (out.empty()) check_schedule(c.plan, types, file, out, schedule_budget);
  if (program_types) *program_types = std::move(types);
  return out;
}

}  // namespace parity::ir
