#include "reduce/reduce.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>
#include <variant>

#include "ir/op_registry.h"
#include "ir/semantics.h"
#include "ir/validate.h"
#include "reduce/distinct_sizes.h"
#include "reduce/id_ops.h"
#include "reduce/replicated_sums.h"
#include "reduce/selection_floors.h"
#include "reduce/walk.h"

namespace parity::reduce {

namespace {

// Expression trees already looked at in one walk: readers share the tree of
// equal texts, and what a walk finds in a tree (kept with its first place)
// is the same wherever it recurs.
using Seen = std::unordered_set<const void*>;

using Why = std::map<std::string, std::string>;  // symbol -> why it is kept

// Axes a plan's meaning may depend on in ways a smaller axis would not show.
// Whether `e` moves with coordinate `coord` by a step that no size changes
// (`$dp*2`, and written around the textual check, `$dp*2+0*B` or
// `$dp*(B/B+1)`): its step is the same with every dim doubled and with every
// axis doubled. A step that cannot be evaluated so counts as scaling.
bool constant_step(const ir::DimExpr& e, const std::string& coord, const ir::Case& c) {
  std::set<std::string> used;
  e.symbols(used);
  ir::Bindings base, dims2, axes2;
  for (const auto& [k, v] : c.plan.dims) base[k] = v;
  if (c.spec)
    for (const auto& [k, v] : c.spec->dims) base.emplace(k, v);
  dims2 = base;
  for (auto& [k, v] : dims2) v *= 2;
  for (const auto& a : c.plan.mesh.axes) {
    base[a.name] = dims2[a.name] = a.size;
    axes2 = base;
  }
  axes2 = base;
  for (const auto& a : c.plan.mesh.axes) axes2[a.name] = 2 * a.size;
  auto step = [&](ir::Bindings b) -> std::optional<int64_t> {
    for (const auto& x : used)
      if (!x.empty() && x[0] == '$') b[x] = 0;
    int64_t v0 = 0, v1 = 0;
    if (!e.try_eval(b, v0)) return std::nullopt;
    b[coord] = 1;
    if (!e.try_eval(b, v1)) return std::nullopt;
    return v1 - v0;
  };
  auto s0 = step(base), s1 = step(dims2), s2 = step(axes2);
  return s0 && s1 && s2 && *s0 != 0 && *s0 == *s1 && *s0 == *s2;
}

// The dims of the op or placement an expression sits in (its sizes).
void sizes_at(const Where& where, const ir::Case& c, std::set<std::string>& out) {
  std::set<std::string> syms;
  if (where.op)
    for (const auto& [k, a] : where.op->attrs) {
      if (const auto* x = std::get_if<ir::DimExpr>(&a)) x->symbols(syms);
      if (const auto* d = std::get_if<ir::Dims>(&a))
        for (const auto& x : *d) x.symbols(syms);
    }
  if (where.placement)
    for (const auto& r : where.placement->region) {
      r.offset.symbols(syms);
      r.size.symbols(syms);
    }
  for (const auto& x : syms)
    if (!x.empty() && x[0] != '$' && !c.plan.mesh.axis_index(x)) out.insert(x);
}

void axis_blockers(const ir::Case& c, Why& why, Why& frozen) {
  const ir::Plan& p = c.plan;
  for (const auto& prog : p.programs)
    walk_ops(prog.graph, [&](const ir::Op& op) {
      if (const ir::Attr* a = op.attr("peer"); a && std::holds_alternative<ir::Coords>(*a))
        for (const auto& [axis, e] : std::get<ir::Coords>(*a))
          if (!why.count(axis)) why.emplace(axis, "send/recv peers move along it (" + prog.name + " op " + op.label() + ")");
      if (const ir::Attr* a = op.attr("groups"); a && std::holds_alternative<ir::Groups>(*a)) {
        const ir::Groups& gs = std::get<ir::Groups>(*a);
        for (const auto& g : gs) {
          if (g.empty()) continue;
          ir::Coord c0 = p.mesh.coord_of(g[0]);
          for (int64_t r : g) {
            ir::Coord cr = p.mesh.coord_of(r);
            for (size_t k = 0; k < cr.size(); ++k)
              if (cr[k] != c0[k])
                why.emplace(p.mesh.axes[k].name,
                            "explicit groups vary along it (" + prog.name + " op " + op.label() + ")");
          }
        }
        // Groups within one coordinate of an axis must be the same groups,
        // members in the same order, at every coordinate of it: the reduced
        // axis keeps some coordinates' groups only (a group listed in
        // another order at dp=5 gathers its shards swapped there).
        for (size_t k = 0; k < p.mesh.axes.size(); ++k) {
          const std::string& axis = p.mesh.axes[k].name;
          if (why.count(axis)) continue;
          std::map<std::vector<int64_t>, std::set<int64_t>> at;  // members with coordinate k at 0 -> coordinates
          bool uniform = true;
          for (const auto& g : gs) {
            if (g.empty()) continue;
            std::vector<int64_t> pattern;
            const int64_t v = p.mesh.coord_of(g[0])[k];
            for (int64_t r : g) {
              ir::Coord cr = p.mesh.coord_of(r);
              cr[k] = 0;
              pattern.push_back(p.mesh.rank_of(cr));
            }
            uniform &= at[pattern].insert(v).second;
          }
          for (const auto& [pattern, vs] : at) uniform &= static_cast<int64_t>(vs.size()) == p.mesh.axes[k].size;
          if (!uniform)
            why.emplace(axis, "explicit groups differ from one of its coordinates to another (" + prog.name + " op " +
                                  op.label() + ")");
        }
      }
    });
  std::vector<std::pair<std::string, std::string>> coords;  // (axis, $axis)
  for (const auto& a : p.mesh.axes) coords.push_back({a.name, "$" + a.name});
  Seen seen;
  std::set<std::string> syms;
  for_each_expr(c, [&](const ir::DimExpr& e, const Where& where) {
    if (e.is_const() || !seen.insert(e.id()).second) return;
    for (const auto& [axis, sym] : coords)
      if (!why.count(axis) && degree_in(e, sym) > 1)
        why.emplace(axis, "its coordinate enters " + where.str() + " non-affinely: " + e.str());
    // A coordinate computed with literals alone (`$g*2`, the rows of a
    // shard of a module with fixed sizes) keeps its step when the axis
    // shrinks: a smaller axis is not the same plan at smaller sizes (its
    // shards would no longer tile the tensor, a sum over the axis would
    // add fewer of them). Offsets that scale (`$tp*(F/tp)`) name a size.
    // The dims of its op or placement are kept too: with the axis kept and
    // the dims lowered, `$dp*2` tiles rows of B/dp = 2 exactly.
    syms.clear();
    e.symbols(syms);
    const bool literal_only =
        std::none_of(syms.begin(), syms.end(), [](const std::string& s) { return s.empty() || s[0] != '$'; });
    if (where.attr && (*where.attr == "peer" || *where.attr == "tag")) return;  // condition 4; an identifier
    for (const auto& [axis, sym] : coords) {
      if (why.count(axis) || !syms.count(sym) || (!literal_only && !constant_step(e, sym, c))) continue;
      const std::string w = "its coordinate enters " + where.str() + " with a literal step: " + e.str() +
                            " does not scale with the sizes";
      why.emplace(axis, w);
      std::set<std::string> keep;
      sizes_at(where, c, keep);
      for (const auto& d : keep) frozen.emplace(d, w);
    }
  });
}

// A carried value of a loop body computed from constants alone that changes
// from one iteration to the next (`step + 1`): it counts the iterations as
// data, which no dim expression shows (a gradient kept only while
// `step < 5` is dropped from the 6th microbatch on, at 16 microbatches and
// never at 2). The first such value, or "".
// `outer_const`: the values of the enclosing graph computed from constants
// alone; a carried value that starts from data (a gradient buffer fed in,
// an activation) is no counter.
std::string iteration_counter(const ir::Op& loop, const std::set<std::string>& outer_const) {
  const ir::Graph& body = loop.regions.at(0);
  std::set<std::string> carried;
  for (size_t i = 0; i < body.inputs.size() && i < loop.operands.size(); ++i)
    if (outer_const.count(loop.operands[i])) carried.insert(body.inputs[i]);
  // Values computed from constants and the still-candidate carried values;
  // `reads` names the carried values each one reads through some op.
  for (;;) {
    std::set<std::string> free_vals = carried;
    std::map<std::string, std::set<std::string>> reads;
    for (const auto& op : body.ops) {
      bool all_free = op.regions.empty();
      std::set<std::string> r;
      for (const auto& o : op.operands) {
        if (!free_vals.count(o)) all_free = false;
        if (carried.count(o)) r.insert(o);
        if (auto it = reads.find(o); it != reads.end()) r.insert(it->second.begin(), it->second.end());
      }
      if (!all_free) continue;
      for (const auto& res : op.results) {
        free_vals.insert(res);
        reads[res] = r;
      }
    }
    std::set<std::string> keep;
    for (size_t i = 0; i < body.inputs.size() && i < body.outputs.size(); ++i)
      if (carried.count(body.inputs[i]) && free_vals.count(body.outputs[i])) keep.insert(body.inputs[i]);
    if (keep != carried) {
      carried = std::move(keep);
      continue;
    }
    for (size_t i = 0; i < body.inputs.size() && i < body.outputs.size(); ++i) {
      const auto it = reads.find(body.outputs[i]);
      if (carried.count(body.inputs[i]) && it != reads.end() && it->second.count(body.inputs[i]))
        return body.inputs[i] + " (carried out as " + body.outputs[i] + ")";
    }
    return "";
  }
}

// Loop counts whose loop index is used non-affinely cannot shrink.
void loop_blockers(const ir::Case& c, Why& frozen) {
  std::vector<std::pair<std::string, ir::DimExpr>> loops;
  std::function<void(const ir::Graph&)> collect = [&](const ir::Graph& g) {
    std::set<std::string> consts;  // computed from constants alone (a graph's inputs are not)
    for (const auto& op : g.ops) {
      if (op.regions.empty() && std::all_of(op.operands.begin(), op.operands.end(),
                                            [&](const std::string& o) { return consts.count(o) > 0; }))
        consts.insert(op.results.begin(), op.results.end());
      for (const auto& r : op.regions) collect(r);
      if (op.kind != "loop") continue;
      const ir::Attr* v = op.attr("var");
      const ir::Attr* n = op.attr("count");
      if (v && n && std::holds_alternative<std::string>(*v) && std::holds_alternative<ir::DimExpr>(*n)) {
        loops.push_back({std::get<std::string>(*v), std::get<ir::DimExpr>(*n)});
        if (op.regions.size() != 1) continue;
        if (const std::string ctr = iteration_counter(op, consts); !ctr.empty()) {
          std::set<std::string> syms;
          std::get<ir::DimExpr>(*n).symbols(syms);
          for (const auto& x : syms)
            frozen.emplace(x, "loop " + op.label() + " carries " + ctr +
                                  ", computed from constants alone and changed each iteration: it counts the "
                                  "iterations as data");
        }
      }
    }
  };
  if (c.spec) collect(c.spec->graph);
  for (const auto& prog : c.plan.programs) collect(prog.graph);
  // One walk for every loop: loops of one index name freeze their counts together.
  std::map<std::string, std::set<std::string>> counts;  // $var -> symbols of its counts
  for (const auto& [var, count] : loops) count.symbols(counts["$" + var]);
  if (counts.empty()) return;
  Seen seen;
  std::set<std::string> used;
  for_each_expr(c, [&](const ir::DimExpr& e, const Where& where) {
    if (e.is_const() || !seen.insert(e.id()).second) return;
    for (const auto& [var, syms] : counts) {
      if (degree_in(e, var) <= 1) continue;
      for (const auto& s : syms)
        frozen.emplace(s, "loop index " + var + " enters " + where.str() + " non-affinely: " + e.str());
    }
    // As for a mesh coordinate (axis_blockers): an index stepped by literals
    // alone (`$mb*2` for rows `$mb*(B/dp/M)`) keeps its step when the count
    // and the sizes shrink, so the smaller loop is not the same plan.
    used.clear();
    e.symbols(used);
    const bool literal_only =
        std::none_of(used.begin(), used.end(), [](const std::string& x) { return x.empty() || x[0] != '$'; });
    if (where.attr && *where.attr == "tag") return;  // an identifier, not a position
    for (const auto& [var, syms] : counts) {
      if (!used.count(var) || e.kind() == ir::DimExpr::Kind::Sym) continue;
      if (!literal_only && !constant_step(e, var, c)) continue;
      // Its step: an affine index moved by 1 or not at all (`$mb+1000`) is
      // the same at any count.
      ir::Bindings at0, at1;
      for (const auto& x : used) at0[x] = at1[x] = 0;
      at1[var] = 1;
      int64_t v0 = 0, v1 = 0;
      if (e.try_eval(at0, v0) && e.try_eval(at1, v1) && std::abs(v1 - v0) <= 1) continue;
      // The count and the sizes the op reads with it (`size: B/dp/M`).
      std::set<std::string> keep = syms;
      if (where.op)
        for (const auto& [k, a] : where.op->attrs) {
          if (const auto* x = std::get_if<ir::DimExpr>(&a)) x->symbols(keep);
          if (const auto* d = std::get_if<ir::Dims>(&a))
            for (const auto& x : *d) x.symbols(keep);
        }
      for (const auto& s : keep)
        if (!s.empty() && s[0] != '$' && !c.plan.mesh.axis_index(s))
          frozen.emplace(s, "loop index " + var + " enters " + where.str() + " with a literal step: " + e.str() +
                                " does not scale with the sizes");
    }
  });
}

// A coordinate or loop index that selects from a constant built inside the
// program (a `fill` sliced at `$mb`) makes the program differ between
// coordinates in its data, not its text: such an index is never reduced.
void constant_index_blockers(const ir::Case& c, Why& axes, Why& frozen) {
  static const std::set<std::string> makers = {"fill", "iota", "constant", "arange", "eye"};
  for (const auto& prog : c.plan.programs) {
    std::set<std::string> konst;
    std::map<std::string, std::set<std::string>> counts;  // loop var -> symbols of its count
    walk_ops(prog.graph, [&](const ir::Op& op) {
      if (note_loop_count(op, counts)) return;
      bool from_const = op.operands.empty() ? makers.count(op.kind) > 0 : op.regions.empty();
      bool reads_const = false;
      for (const auto& o : op.operands) {
        from_const &= konst.count(o) > 0;
        reads_const |= konst.count(o) > 0;
      }
      if (from_const)
        for (const auto& r : op.results) konst.insert(r);
      if (!reads_const) return;
      std::set<std::string> syms;
      for (const auto& [k, a] : op.attrs) {
        // A message tag names the message; it selects no data (a layer
        // fold's stub, a `fill`, is sent with tag `$mb`).
        if (k == "tag") continue;
        if (auto* e = std::get_if<ir::DimExpr>(&a)) e->symbols(syms);
        if (auto* d = std::get_if<ir::Dims>(&a))
          for (const auto& e : *d) e.symbols(syms);
      }
      for (const auto& sym : syms) {
        if (sym.empty() || sym[0] != '$') continue;
        std::string x = sym.substr(1);
        std::string why = "$" + x + " selects from a constant built in the program (" + prog.name + " op " +
                          op.label() + "): the program's data differs between coordinates";
        if (c.plan.mesh.axis_index(x)) axes.emplace(x, why);
        for (const auto& cs : counts[x]) frozen.emplace(cs, why);
      }
    });
  }
}

// A coordinate or loop index inside a float attribute (a `fill` value, a
// `scale` factor written `i: "$dp*(B/dp)"`) is data from there on, and data
// may go through ops that are not affine in it: `min(X, 4X - $dp*X)` weighs
// ranks 4 and up by zero or less, three affine factors multiply into a cubic
// that is 1 on ranks 0..2 only, `relu(X - |$dp-37| X)` picks rank 37. The
// reductions' arguments hold for coordinates in dim expressions (sizes,
// offsets, peers), not for such data: the axis and the loop count are kept.
void coordinate_data_blockers(const ir::Case& c, Why& axes, Why& frozen) {
  for (const auto& prog : c.plan.programs) {
    std::map<std::string, std::set<std::string>> counts;  // loop var -> symbols of its count
    walk_ops(prog.graph, [&](const ir::Op& op) {
      note_loop_count(op, counts);
      for (const auto& [k, a] : op.attrs) {
        const auto* e = std::get_if<ir::DimExpr>(&a);
        if (!e || e->is_const() || !float_attr(op, k)) continue;
        std::set<std::string> syms;
        e->symbols(syms);
        for (const auto& sym : syms) {
          if (sym.empty() || sym[0] != '$') continue;
          const std::string x = sym.substr(1);
          const std::string why = "$" + x + " enters data as the float attribute " + k + " = " + e->str() + " (" +
                                  prog.name + " op " + op.label() + "), which later ops need not use affinely";
          if (c.plan.mesh.axis_index(x)) axes.emplace(x, why);
          for (const auto& cs : counts[x]) frozen.emplace(cs, why);
        }
      }
    });
  }
}

// Loop counts (their dim symbols), e.g. M for the microbatch loop.
std::map<std::string, std::string> loop_counts(const ir::Case& c) {
  std::map<std::string, std::string> out;
  for (const auto& prog : c.plan.programs)
    walk_ops(prog.graph, [&](const ir::Op& op) {
      if (op.kind != "loop") return;
      const ir::Attr* n = op.attr("count");
      if (!n || !std::holds_alternative<ir::DimExpr>(*n)) return;
      std::set<std::string> syms;
      std::get<ir::DimExpr>(*n).symbols(syms);
      for (const auto& s : syms) out[s] = prog.name;
    });
  return out;
}

// Loop counts as expressions, with where they are (`cp-1` of a ring loop).
std::vector<std::pair<ir::DimExpr, std::string>> loop_count_exprs(const ir::Case& c) {
  std::vector<std::pair<ir::DimExpr, std::string>> out;
  for (const auto& prog : c.plan.programs)
    walk_ops(prog.graph, [&](const ir::Op& op) {
      const ir::Attr* n = op.kind == "loop" ? op.attr("count") : nullptr;
      if (n && std::holds_alternative<ir::DimExpr>(*n) && !std::get<ir::DimExpr>(*n).is_const())
        out.emplace_back(std::get<ir::DimExpr>(*n), "program " + prog.name + " op " + op.label());
    });
  return out;
}

// A loop that runs several times as given must run at least twice reduced:
// one iteration cannot show what it carries from one to the next (a ring of
// `cp-1` steps rotated the wrong way is right at cp = 2, one step, where r+1
// and r-1 are the same chunk). Raises the floor of a reduced size of the
// count, the axes last; true when it raised one.
bool loop_count_floors(const std::vector<std::pair<ir::DimExpr, std::string>>& counts, const ir::Bindings& given,
                       const ir::Bindings& now, const std::map<std::string, std::pair<int64_t, int64_t>>& changed,
                       const ir::Mesh& mesh, std::map<std::string, int64_t>& floors, Why& floor_why) {
  for (const auto& [e, where] : counts) {
    int64_t before = 0, after = 0;
    if (!e.try_eval(given, before) || !e.try_eval(now, after) || before < 2 || after >= 2) continue;
    std::set<std::string> syms;
    e.symbols(syms);
    for (bool axes : {false, true})
      for (const auto& x : syms) {
        if (!changed.count(x) || mesh.axis_index(x).has_value() != axes || now.at(x) >= changed.at(x).first) continue;
        if (direction(e, x) <= 0) continue;  // raising it would not raise the count
        floors[x] = now.at(x) + 1;
        floor_why[x] = "at " + x + " = " + std::to_string(now.at(x)) + ", the loop count " + e.str() + " of " + where +
                       " is " + std::to_string(after) + " (" + std::to_string(before) +
                       " as given): one iteration cannot show what the loop carries";
        return true;
      }
  }
  return false;
}

// The integer literals of 3 or more in index terms (expressions that read a
// coordinate or a loop index): a row offset `$tp*(6/tp)` where `F/tp` is
// meant. Collected once.
std::set<int64_t> index_term_literals(const ir::Case& c);

// A size reduced to the value of such a literal, which it does not have as
// given, would let the literal stand for it at the reduced sizes only (the
// offset above is right at F = 6 and wrong at F = 8): its floor is raised
// past the literal. One at a time; true when one was raised.
bool index_literal_floors(const std::set<int64_t>& lits, const ir::Bindings& now,
                          const std::map<std::string, std::pair<int64_t, int64_t>>& changed,
                          std::map<std::string, int64_t>& floors, Why& floor_why) {
  for (const auto& [x, v] : changed) {
    const int64_t r = now.at(x);
    if (v.first == r || !lits.count(r) || floors[x] > r) continue;
    floors[x] = r + 1;
    floor_why[x] = "at " + x + " = " + std::to_string(r) + ", it would equal the literal " + std::to_string(r) +
                   " of an index term (" + std::to_string(v.first) + " as given): the literal could stand for " + x +
                   " there only";
    return true;
  }
  return false;
}

// Compresses each axis' coordinates: runs of coordinates that run the same
// programs keep `keep` members.
// `pad`: each reduced axis grows to the smallest divisor of its size that
// holds the coordinates kept, taking more coordinates of its runs (any number
// of a run's interchangeable coordinates may stand for it): dims divisible by
// the axis as given stay divisible by it reduced.
std::vector<AxisMap> compress_axes(const ir::Plan& p, const Why& blocked, int64_t keep, Result& r, bool pad = false,
                                   const std::map<std::string, int64_t>& floors = {}) {
  std::vector<AxisMap> maps;
  for (size_t ai = 0; ai < p.mesh.axes.size(); ++ai) {
    const ir::MeshAxis& ax = p.mesh.axes[ai];
    AxisMap m{ax.name, ax.size, ax.size, {}};
    for (int64_t v = 0; v < ax.size; ++v) m.orig_of.push_back(v);
    auto b = blocked.find(ax.name);
    if (ax.size <= keep || b != blocked.end()) {
      if (b != blocked.end() && ax.size > keep)
        r.kept.push_back(ax.name + " kept at " + std::to_string(ax.size) + ": " + b->second);
      maps.push_back(m);
      continue;
    }
    auto sig = [&](int64_t v) {
      std::vector<bool> s;
      for (const auto& prog : p.programs) {
        auto it = prog.ranks.fixed.find(ax.name);
        s.push_back(it == prog.ranks.fixed.end() || std::count(it->second.begin(), it->second.end(), v));
      }
      return s;
    };
    m.orig_of.clear();
    std::vector<std::pair<int64_t, int64_t>> runs;  // (first coordinate, length)
    for (int64_t start = 0; start < ax.size;) {
      int64_t end = start;
      auto s0 = sig(start);
      while (end + 1 < ax.size && sig(end + 1) == s0) ++end;
      runs.emplace_back(start, end - start + 1);
      start = end + 1;
    }
    std::vector<int64_t> take;
    int64_t total = 0;
    for (const auto& [first, len] : runs) total += take.emplace_back(std::min(len, keep));
    // Grown to a floor (to keep it apart from another axis, distinct_sizes.h):
    // the smallest divisor of its size at or above it.
    const auto fl = floors.find(ax.name);
    if (pad || fl != floors.end()) {
      int64_t target = fl != floors.end() ? std::max(total, fl->second) : total;
      while (ax.size % target != 0) ++target;
      for (size_t i = 0; i < runs.size() && total < target; ++i) {
        const int64_t more = std::min(runs[i].second - take[i], target - total);
        take[i] += more;
        total += more;
      }
    }
    for (size_t i = 0; i < runs.size(); ++i)
      for (int64_t j = 0; j < take[i]; ++j) m.orig_of.push_back(runs[i].first + j);
    m.to = static_cast<int64_t>(m.orig_of.size());
    maps.push_back(m);
  }
  return maps;
}

std::optional<int64_t> reduced_coord(const AxisMap& m, int64_t orig) {
  for (size_t i = 0; i < m.orig_of.size(); ++i)
    if (m.orig_of[i] == orig) return static_cast<int64_t>(i);
  return std::nullopt;
}

void apply_axes(ir::Plan& p, const std::vector<AxisMap>& maps) {
  ir::Mesh orig = p.mesh;
  for (size_t i = 0; i < maps.size(); ++i) p.mesh.axes[i].size = maps[i].to;
  for (auto& prog : p.programs)
    for (auto& [axis, vals] : prog.ranks.fixed) {
      auto i = orig.axis_index(axis);
      if (!i) continue;
      const AxisMap& m = maps[*i];
      std::vector<int64_t> nv;
      // Membership is uniform over a run, so a kept coordinate is in exactly
      // when the original coordinate it stands for is.
      for (size_t k = 0; k < m.orig_of.size(); ++k)
        if (std::count(vals.begin(), vals.end(), m.orig_of[k])) nv.push_back(static_cast<int64_t>(k));
      vals = nv;
    }
  for (auto& prog : p.programs)
    walk_ops_mut(prog.graph, [&](ir::Op& op) {
      auto it = op.attrs.find("groups");
      if (it == op.attrs.end() || !std::holds_alternative<ir::Groups>(it->second)) return;
      ir::Groups ng;
      for (const auto& g : std::get<ir::Groups>(it->second)) {
        std::vector<int64_t> mg;
        for (int64_t r : g) {
          ir::Coord c = orig.coord_of(r);
          bool kept = true;
          for (size_t k = 0; k < c.size() && kept; ++k) {
            auto rc = reduced_coord(maps[k], c[k]);
            if (rc) c[k] = *rc;
            else kept = false;
          }
          if (!kept) {
            mg.clear();
            break;
          }
          mg.push_back(p.mesh.rank_of(c));
        }
        if (!mg.empty()) ng.push_back(mg);
      }
      it->second = ng;
    });
}

std::map<std::string, int64_t> all_dims(const ir::Case& c) {
  std::map<std::string, int64_t> d = c.plan.dims;
  if (c.spec)
    for (const auto& [k, v] : c.spec->dims) d.emplace(k, v);
  return d;
}

// The smallest dims under which every division is exact and no dim or shard
// extent falls below 2 (or below its original size, when that is smaller).
std::map<std::string, int64_t> shrink_dims(const ir::Case& reduced, const ir::Bindings& orig_base,
                                           const std::map<std::string, int64_t>& dims, const Why& frozen,
                                           const std::map<std::string, int64_t>& floors,
                                           const std::vector<std::pair<std::string, std::string>>& ties,
                                           int64_t least) {
  std::map<std::string, ir::DimExpr> divs;
  Seen seen;
  for_each_expr(reduced, [&](const ir::DimExpr& e, const Where&) {
    if (!seen.insert(e.id()).second) return;
    std::vector<ir::DimExpr> ds;
    divisions(e, ds);
    for (const auto& d : ds)
      if (!has_coord(d)) divs.emplace(d.str(), d);
  });
  std::vector<std::pair<ir::DimExpr, int64_t>> checks;  // (division, minimum)
  for (const auto& [s, d] : divs) {
    int64_t ov;
    if (!d.try_eval(orig_base, ov)) continue;
    checks.push_back({d, std::min<int64_t>(least, ov)});
  }
  ir::Bindings b;
  for (const auto& a : reduced.plan.mesh.axes) b[a.name] = a.size;
  for (const auto& [k, v] : dims) b[k] = v;
  auto ok = [&]() {
    for (const auto& [d, lo] : checks) {
      int64_t v;
      if (!d.try_eval(b, v) || v < lo) return false;
    }
    return true;
  };
  // A kept odd coordinate (5 of 16) may not divide the dims as given: make
  // each dim divided by a size a multiple of it first.
  for (int iter = 0; iter < 32 && !ok(); ++iter)
    for (const auto& [d, lo] : checks) {
      int64_t v;
      if (d.try_eval(b, v)) continue;
      ir::DimExpr num = d.lhs();
      int64_t den;
      if (num.kind() != ir::DimExpr::Kind::Sym || !b.count(num.name()) || frozen.count(num.name()) ||
          !dims.count(num.name()) || !d.rhs().try_eval(b, den) || den <= 0)
        continue;
      int64_t x = b[num.name()];
      b[num.name()] = x / std::gcd(x, den) * den;
    }
  if (!ok()) return dims;  // the reduced mesh does not divide the dims
  // Tied dims (distinct_sizes.h) are lowered together; a class with a kept
  // member is kept.
  std::map<std::string, std::string> root;
  for (const auto& [k, orig] : dims) root[k] = k;
  std::function<std::string(const std::string&)> find = [&](const std::string& x) {
    return root[x] == x ? x : root[x] = find(root[x]);
  };
  for (const auto& [x, y] : ties)
    if (dims.count(x) && dims.count(y) && dims.at(x) == dims.at(y)) root[find(x)] = find(y);
  std::map<std::string, std::pair<int64_t, std::vector<std::string>>> classes;
  for (const auto& [k, orig] : dims) {
    auto& cl = classes[find(k)];
    cl.first = orig;
    cl.second.push_back(k);
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto& [name, cl] : classes) {
      const auto& [orig, members] = cl;
      bool kept = false;
      int64_t cur = b[members[0]];
      for (const auto& k : members) {
        kept |= frozen.count(k) > 0;
        cur = std::min(cur, b[k]);
      }
      if (kept) continue;
      std::map<std::string, int64_t> before;
      for (const auto& k : members) before[k] = b[k];
      // A floor set by the caller: a smaller value made sizes coincide.
      int64_t lo = std::min<int64_t>(least, orig);
      for (const auto& k : members)
        if (auto f = floors.find(k); f != floors.end()) lo = std::max(lo, f->second);
      for (int64_t cand = lo; cand < cur; ++cand) {
        for (const auto& k : members) b[k] = cand;
        if (ok()) {
          changed = true;
          break;
        }
        for (const auto& [k, v] : before) b[k] = v;
      }
    }
  }
  std::map<std::string, int64_t> out;
  for (const auto& [k, v] : dims) out[k] = b[k];
  return out;
}

void consts_of(const ir::DimExpr& e, std::vector<int64_t>& out) {
  using K = ir::DimExpr::Kind;
  if (e.kind() == K::Const) out.push_back(e.const_value());
  if (e.kind() == K::Const || e.kind() == K::Sym) return;
  consts_of(e.lhs(), out);
  if (e.kind() != K::Neg) consts_of(e.rhs(), out);
}

std::set<int64_t> index_term_literals(const ir::Case& c) {
  std::set<int64_t> out;
  Seen seen;
  for_each_expr(c, [&](const ir::DimExpr& e, const Where&) {
    if (!seen.insert(e.id()).second || !has_coord(e)) return;
    std::vector<int64_t> ks;
    consts_of(e, ks);
    for (int64_t k : ks)
      if (k >= 3) out.insert(k);
  });
  return out;
}

// Literals equal to a quantity the reduction changes would keep their value
// while the quantity shrinks: a false alarm or a hidden bug. Returns the
// symbols to keep, with the literal that pins them.
// How many elements a spec `reduce_mean` averages (a product of dims, `B*F`),
// or a scaled `reduce_sum` sums:
// a plan may write its reciprocal as a literal (`scale 1/24`), which no
// single dim or product with a mesh axis equals. Found once, before the rounds.
struct MeanCount {
  ir::DimExpr count;
  std::string where;
};

// The element counts of the means of the spec and of every program (a plan
// may take its own mean and rescale it by a literal count).
std::vector<MeanCount> mean_counts(const ir::Case& c, const ir::Bindings& base) {
  std::vector<MeanCount> out;
  if (!c.spec) return out;
  auto scan = [&](const ir::Graph& g, const std::string& scope, const ir::Mesh* mesh) {
    std::optional<ir::TypeMap> types;  // inferred only for a graph with a mean
    // A mean is also written as a sum times a literal (`torch.mean` lowered
    // to `sum * (1/numel)`): a `reduce_sum` whose result a `scale`, or a
    // `mul` or `div` with a `fill`, reads counts as one.
    std::set<std::string> fills, scaled;
    walk_ops(g, [&](const ir::Op& op) {
      if (op.kind == "fill")
        for (const auto& r : op.results) fills.insert(r);
    });
    walk_ops(g, [&](const ir::Op& op) {
      if (op.kind == "scale" && !op.operands.empty()) scaled.insert(op.operands[0]);
      if ((op.kind == "mul" || op.kind == "div") && op.operands.size() == 2) {
        if (fills.count(op.operands[1])) scaled.insert(op.operands[0]);
        if (op.kind == "mul" && fills.count(op.operands[0])) scaled.insert(op.operands[1]);
      }
    });
    walk_ops(g, [&](const ir::Op& op) {
      if (op.operands.empty() || op.results.empty()) return;
      if (op.kind != "reduce_mean" && !(op.kind == "reduce_sum" && scaled.count(op.results[0]))) return;
      if (!types) {
        ir::DiagList ignored;
        types = mesh ? ir::check_graph(g, base, mesh, ir::Diag{}, ignored)
                     : ir::check_graph(g, c.spec->dims, nullptr, ir::Diag{}, ignored);
      }
      auto t = types->find(op.operands[0]);
      const ir::Attr* a = op.attr("dims");
      if (t == types->end() || !a || !std::holds_alternative<ir::Dims>(*a)) return;
      const auto rank = static_cast<int64_t>(t->second.shape.size());
      std::optional<ir::DimExpr> n;
      for (const auto& d : std::get<ir::Dims>(*a)) {
        if (!d.is_const()) return;
        int64_t k = d.const_value();
        if (k < 0) k += rank;
        if (k < 0 || k >= rank) return;
        const ir::DimExpr& x = t->second.shape[static_cast<size_t>(k)];
        n = n ? *n * x : x;
      }
      if (n && !n->is_const()) out.push_back({*n, scope + " op " + op.label()});
    });
  };
  scan(c.spec->graph, "spec", nullptr);
  for (const auto& prog : c.plan.programs) scan(prog.graph, "program " + prog.name, &c.plan.mesh);
  return out;
}

Why literal_pins(const ir::Case& c,
                 const std::map<std::string, std::pair<int64_t, int64_t>>& changed,
                 const std::map<std::string, int64_t>& all, const std::set<std::string>& plan_sizes,
                 bool refute, std::vector<Reading>* readings = nullptr,
                 const std::vector<MeanCount>& means = {},
                 std::map<double, std::string>* generalize = nullptr) {
  struct Q {
    std::string text;
    double value;
    std::vector<std::string> syms;
    bool product = false;    // of two sizes: compared as q and 1/q only
    bool spec_size = false;  // a dim of the spec, alone: what a constant of the model can stand for
    double reduced = 0;      // its value at the reduced sizes
  };
  std::vector<Q> qs;
  for (const auto& [x, xv] : changed) {
    qs.push_back({x + "=" + std::to_string(xv.first),
                  static_cast<double>(xv.first),
                  {x},
                  false,
                  c.spec->dims.count(x) > 0,
                  static_cast<double>(xv.second)});
    for (const auto& [y, yv] : all) {
      if (y == x || (changed.count(y) && y < x)) continue;
      // Products that mean something to a plan: a global batch over data
      // ranks and microbatches (dp*M), a size times a mesh axis. Products of
      // two model dims coincide with literals by accident too often.
      if (!plan_sizes.count(x) && !plan_sizes.count(y)) continue;
      std::vector<std::string> syms{x};
      if (changed.count(y)) syms.push_back(y);
      const int64_t yr = changed.count(y) ? changed.at(y).second : yv;
      qs.push_back({x + "*" + y + "=" + std::to_string(xv.first * yv),
                    static_cast<double>(xv.first * yv), syms, true, false,
                    static_cast<double>(xv.second * yr)});
    }
  }
  // The counts of the means (spec and plan) that the reduction changes.
  ir::Bindings orig_b(all.begin(), all.end()), now_b = orig_b;
  for (const auto& [k, v] : changed) now_b[k] = v.second;
  for (const auto& m : means) {
    int64_t before = 0, after = 0;
    if (!m.count.try_eval(orig_b, before) || !m.count.try_eval(now_b, after) || before == after) continue;
    std::set<std::string> syms;
    m.count.symbols(syms);
    std::vector<std::string> names;
    for (const auto& s : syms)
      if (!s.empty() && s[0] != '$') names.push_back(s);
    qs.push_back({m.count.str() + "=" + std::to_string(before) + " (the count of " + m.where + ")",
                  static_cast<double>(before), names, true, m.where.rfind("spec", 0) == 0, static_cast<double>(after)});
  }
  Why pins;
  auto pin = [&](const Q& q, const std::string& lit, const std::string& form, const std::string& where) {
    for (const auto& s : q.syms)
      pins.emplace(s, "the literal " + lit + " in " + where + " equals " + form + " with " + q.text +
                          "; a smaller " + s + " would change what it means");
  };
  // A constant of the model cannot stand for a size of the plan (a mesh
  // axis, a microbatch count): the spec never sees them. A literal is one
  // when it sits in a spec op that the plan copies (an op of the same kind,
  // operands, results and literal attributes), or in such a copy; it is then
  // compared with single dims of the spec only. A spec op the plan does not
  // copy (the plan computes that value some other way, e.g. as a sum along
  // an axis of that size) is compared with every size, and so is every
  // literal of the plan's own.
  std::map<std::string, const ir::Op*> spec_op;
  walk_ops(c.spec->graph, [&](const ir::Op& op) {
    for (const auto& r : op.results) spec_op.emplace(r, &op);
  });
  std::set<const ir::Op*> copied;  // spec ops the plan mirrors
  auto mirror_of = [&](const ir::Op& op) -> const ir::Op* {
    if (op.results.empty()) return nullptr;
    auto it = spec_op.find(op.results[0]);
    if (it == spec_op.end()) return nullptr;
    const ir::Op& s = *it->second;
    if (s.kind != op.kind || s.results != op.results || s.operands != op.operands ||
        s.attrs.size() != op.attrs.size())
      return nullptr;
    for (const auto& [k, a] : op.attrs) {
      const ir::Attr* b = s.attr(k);
      if (!b || a.index() != b->index()) return nullptr;
      if (std::holds_alternative<double>(a) && std::get<double>(a) != std::get<double>(*b))
        return nullptr;
      if (std::holds_alternative<std::string>(a) &&
          std::get<std::string>(a) != std::get<std::string>(*b))
        return nullptr;
      if (std::holds_alternative<ir::DimExpr>(a) && std::get<ir::DimExpr>(a).str() != std::get<ir::DimExpr>(*b).str())
        return nullptr;
    }
    return &s;
  };
  // A literal: its value, where it sits (its text is built only for a pin),
  // the spec op it copies and its attribute.
  struct Lit {
    double value;
    const std::string* program;  // nullptr: the spec
    const ir::Op* op;
    const ir::Op* shared;
    const std::string* key;
    double spec_value = 0;  // nonzero: `value` is the plan's literal over the spec's in the op it rewrites
    std::string where() const {
      std::string w =
          (program ? "program " + *program + " op " : std::string("spec op ")) + op->label() + " attribute " + *key;
      if (spec_value != 0) {
        char buf[96];
        std::snprintf(buf, sizeof buf, " (%.17g over the spec's %.17g)", value * spec_value, spec_value);
        w += buf;
      }
      return w;
    }
  };
  // A plan op that rewrites a spec op (same kind, operands and results) with
  // another value of a float attribute may have folded a size into it (lr
  // 0.1/32768 where the plan sums over dp*M = 32768 instead of averaging):
  // the ratio of the two is compared with the sizes as a literal is.
  auto rewritten = [&](const ir::Op& op) -> const ir::Op* {
    if (op.results.empty()) return nullptr;
    auto it = spec_op.find(op.results[0]);
    if (it == spec_op.end()) return nullptr;
    const ir::Op& s = *it->second;
    return s.kind == op.kind && s.results == op.results && s.operands == op.operands ? &s : nullptr;
  };
  std::vector<Lit> lits;
  for (const auto& prog : c.plan.programs)
    walk_ops(prog.graph, [&](const ir::Op& op) {
      const ir::Op* m = mirror_of(op);
      if (m) copied.insert(m);
      const ir::Op* r = m ? nullptr : rewritten(op);
      for (const auto& [k, a] : op.attrs)
        if (auto x = float_literal(op, k, a)) {
          lits.push_back(Lit{*x, &prog.name, &op, m, &k});
          const ir::Attr* b = r ? r->attr(k) : nullptr;
          std::optional<double> y = b ? float_literal(*r, k, *b) : std::nullopt;
          if (y && *y != 0 && *y != *x && std::isfinite(*y)) lits.push_back(Lit{*x / *y, &prog.name, &op, m, &k, *y});
        }
    });
  walk_ops(c.spec->graph, [&](const ir::Op& op) {
    const ir::Op* m = copied.count(&op) ? &op : nullptr;
    for (const auto& [k, a] : op.attrs)
      if (auto x = float_literal(op, k, a)) lits.push_back(Lit{*x, nullptr, &op, m, &k});
  });
  // Literals of scalar attributes equal to a size as given are read as
  // indeterminates instead of pinning it (Options::generalize_literals): the
  // values, each with what it equals. A value of another attribute still
  // pins (an exponent or an optimizer constant stays a number).
  auto as_given_form = [&](const Lit& lit) -> std::string {
    const double a = std::fabs(lit.value);
    if (!std::isfinite(a) || a == 0 || a == 1 || a == 2 || a == 0.5) return {};
    for (const auto& q : qs) {
      if (q.value < 2 || (lit.shared && !q.spec_size)) continue;
      const std::pair<double, const char*> forms[] = {
          {q.value, "q"}, {1 / q.value, "1/q"}, {1 / std::sqrt(q.value), "1/sqrt(q)"}};
      for (const auto& [t, f] : forms)
        if (std::fabs(a - t) <= 1e-9 * t && !(q.product && std::string(f) == "1/sqrt(q)"))
          return std::string(f) + " with " + q.text;
    }
    return {};
  };
  auto generalized = [&](const Lit& lit) {
    return generalize && lit.spec_value == 0 && generalize->count(lit.value) &&
           ir::is_scalar_attr(lit.op->kind, *lit.key) && !ir::sem::integer_typed(*lit.op);
  };
  if (generalize) {
    generalize->clear();
    for (const Lit& lit : lits)
      if (lit.spec_value == 0 && ir::is_scalar_attr(lit.op->kind, *lit.key) && !ir::sem::integer_typed(*lit.op))
        if (std::string f = as_given_form(lit); !f.empty()) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.17g", lit.value);
          generalize->emplace(lit.value, std::string(buf) + " (" + f + ")");
        }
  }
  // The other direction: a literal equal to a size at its *reduced* value. A
  // plan that hard-codes the factor for 2 ranks (`scale 0.5` for 1/dp) is
  // wrong on 8 ranks and right on 2; verified on 2 it would pass. Such a size
  // is kept. Only scaling literals (`factor`, `value`) of ops that spec and
  // plan do not share are compared: a shared op computes the same on both
  // sides, and exponents or optimizer constants do not stand for sizes.
  if (!refute) {
    std::map<std::string, double> now;  // every size at its reduced value
    for (const auto& [k, v] : all) now[k] = static_cast<double>(v);
    for (const auto& [k, v] : changed) now[k] = static_cast<double>(v.second);
    for (const Lit& lit : lits) {
      const double x = lit.value;
      const std::string& key = *lit.key;
      double a = std::fabs(x);
      if (lit.shared || (key != "factor" && key != "value" && lit.spec_value == 0) || !std::isfinite(a) || a == 0 ||
          a == 1 || generalized(lit))
        continue;
      for (const auto& sized : changed) {
        // Named, not bound: lambdas below capture them (clang 14 cannot
        // capture structured bindings).
        const std::string& s = sized.first;
        const int64_t reduced = sized.second.second;
        // The size alone, then its products; a text is built only for a pin.
        auto check = [&](double q, const auto& text) {
          if (q < 2) return;
          const std::pair<double, const char*> forms[] = {{q, "q"}, {1 / q, "1/q"}, {1 / std::sqrt(q), "1/sqrt(q)"}};
          for (const auto& [t, f] : forms)
            if (std::fabs(a - t) <= 1e-9 * t) {
              char buf[64];
              std::snprintf(buf, sizeof buf, "%.17g", x);
              pins.emplace(s, "the literal " + std::string(buf) + " in " + lit.where() +
                                  " equals " + f + " at the reduced " + text() +
                                  "; a plan that hard-codes it would look right there only");
            }
        };
        const double sv = now[s];
        check(sv, [&] { return s + "=" + std::to_string(reduced); });
        // A mean's count at its reduced value (the plan divides by 8 where
        // the spec averages B*F = 24 elements, and B*F is 8 reduced).
        for (const auto& q : qs)
          if (q.product && q.spec_size && q.reduced != q.value &&
              std::find(q.syms.begin(), q.syms.end(), s) != q.syms.end())
            check(q.reduced, [&] { return q.text + ", reduced to " + std::to_string(static_cast<int64_t>(q.reduced)); });
        for (const auto& other : now) {
          const std::string& y = other.first;
          const double yv = other.second;
          if (y != s && (plan_sizes.count(s) || plan_sizes.count(y)))
            check(sv * yv, [&] {
              return s + "*" + y + "=" + std::to_string(static_cast<int64_t>(sv * yv));
            });
        }
      }
    }
  }
  for (const Lit& lit : lits) {
    const double x = lit.value;
    const bool model_constant = lit.shared != nullptr;
    double a = std::fabs(x);
    // 0, 1, 2 and 1/2 are everywhere (exponents, GELU, halves of rotary
    // dims) and a size of 2 is never reduced, so they pin nothing.
    if (!std::isfinite(a) || a == 0 || a == 1 || a == 2 || a == 0.5 || generalized(lit)) continue;
    // Under `readings`, a literal whose op can be found again is read each
    // way instead of pinning (the caller runs every reading).
    const bool reread = readings && !lit.op->results.empty();
    Reading rd;
    // Readings with one value in the reduced instance are one run.
    auto add_reading = [&](const std::string& text, double r) {
      if (x < 0) r = -r;
      if (lit.spec_value != 0) r *= lit.spec_value;  // a reading of the ratio: the literal it gives
      if (r == (lit.spec_value != 0 ? x * lit.spec_value : x)) return;  // the literal as written
      for (auto& [t2, v] : rd.as)
        if (v == r) {
          if (t2.size() < 200) t2 += " or " + text;
          return;
        }
      rd.as.push_back({text, r});
    };
    for (const auto& q : qs) {
      if (q.value < 2 || (model_constant && !q.spec_size)) continue;
      const std::pair<double, const char*> forms[] = {
          {q.value, "q"}, {1 / q.value, "1/q"}, {1 / std::sqrt(q.value), "1/sqrt(q)"}};
      for (const auto& [t, f] : forms)
        if (std::fabs(a - t) <= 1e-9 * t && !(q.product && std::string(f) == "1/sqrt(q)")) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.17g", x);
          if (!reread) {
            pin(q, buf, f, lit.where());
            continue;
          }
          const std::string form = f;
          add_reading(form + " with " + q.text, form == "q"     ? q.reduced
                                                : form == "1/q" ? 1 / q.reduced
                                                                : 1 / std::sqrt(q.reduced));
        }
    }
    // A literal read as a size may stand for a product of three (a global
    // batch dp*M*B): read that way too, so that a correct plan has its own
    // reading among the runs. Only a difference under all of them counts.
    if (reread && !rd.as.empty() && !model_constant) {
      auto now = [&](const std::string& k, int64_t v) {
        return changed.count(k) ? changed.at(k).second : v;
      };
      for (const auto& [x1, v1] : changed)
        for (auto y = all.begin(); y != all.end(); ++y)
          for (auto z = std::next(y); z != all.end(); ++z) {
            if (y->first == x1 || z->first == x1) continue;
            // Each triple once: x1 is the first of its changed sizes.
            if ((changed.count(y->first) && y->first < x1) ||
                (changed.count(z->first) && z->first < x1))
              continue;
            if (!plan_sizes.count(x1) && !plan_sizes.count(y->first) && !plan_sizes.count(z->first))
              continue;
            const double q = static_cast<double>(v1.first * y->second * z->second);
            const double qr = static_cast<double>(v1.second * now(y->first, y->second) *
                                                  now(z->first, z->second));
            const std::pair<double, double> forms[] = {{q, qr}, {1 / q, 1 / qr}};
            for (const auto& [t, rv] : forms)
              if (std::fabs(a - t) <= 1e-9 * t)
                add_reading(std::string(t == q ? "q" : "1/q") + " with " + x1 + "*" + y->first +
                                "*" + z->first + "=" +
                                std::to_string(v1.first * y->second * z->second),
                            rv);
          }
    }
    if (reread && !rd.as.empty()) {
      rd.program = lit.program ? *lit.program : std::string();
      rd.result = lit.op->results[0];
      rd.attr = *lit.key;
      rd.value = lit.spec_value != 0 ? x * lit.spec_value : x;
      readings->push_back(std::move(rd));
    }
  }
  // Axis numbers, permutations, roots and tags are positions, not sizes.
  static const std::set<std::string> positions = {"perm", "dims",         "dim",  "axis", "split_dim",
                                                   "concat_dim", "root", "tag", "k"};
  Seen seen;
  for_each_expr(c, [&](const ir::DimExpr& e, const Where& where) {
    if ((where.attr && positions.count(*where.attr)) || !seen.insert(e.id()).second) return;
    std::vector<int64_t> ks;
    consts_of(e, ks);
    for (int64_t k : ks)
      for (const auto& q : qs)
        if (k > 2 && static_cast<double>(k) == q.value) pin(q, std::to_string(k), "q", where.str() + " (" + e.str() + ")");
  });
  return pins;
}

// The sizes a failing op of the reduced instance depends on: the symbols of
// its operand and result types (as the original plan types them) and of its
// attributes, in name order. Keeping one of them may let the instance
// validate (a hard-coded extent that fits only the size given).
std::vector<std::string> sizes_of_failing_op(const ir::Case& c, const ir::Diag& d, const std::map<std::string, int64_t>& dims) {
  std::set<std::string> syms;
  const ir::Program* prog = nullptr;
  for (const auto& p : c.plan.programs)
    if (p.name == d.program) prog = &p;
  if (!prog || d.op.empty()) return {};
  ir::DiagList ignored;
  std::map<std::string, ir::TypeMap> types;
  ir::validate_plan(c.plan, &*c.spec, "", ignored, &types);
  const ir::TypeMap& tm = types[prog->name];
  walk_ops(prog->graph, [&](const ir::Op& op) {
    if (d.op.rfind(op.label(), 0) != 0) return;
    for (const auto* names : {&op.operands, &op.results})
      for (const auto& n : *names)
        if (auto it = tm.find(n); it != tm.end())
          for (const auto& e : it->second.shape) e.symbols(syms);
    for (const auto& [k, a] : op.attrs)
      if (const auto* e = std::get_if<ir::DimExpr>(&a)) e->symbols(syms);
  });
  std::vector<std::string> out;
  for (const auto& x : syms)
    if (dims.count(x) || c.plan.mesh.axis_index(x)) out.push_back(x);
  return out;
}

}  // namespace

bool set_literal(ir::Case& c, const Reading& r, double value) {
  bool found = false;
  auto set = [&](ir::Graph& g) {
    walk_ops_mut(g, [&](ir::Op& op) {
      if (op.results.empty() || op.results[0] != r.result) return;
      if (auto it = op.attrs.find(r.attr); it != op.attrs.end() && float_literal(op, r.attr, it->second)) {
        it->second = value;
        found = true;
      }
    });
  };
  if (r.program.empty()) {
    if (c.spec) set(c.spec->graph);
  } else {
    for (auto& p : c.plan.programs)
      if (p.name == r.program) set(p.graph);
  }
  return found;
}

int64_t Result::original_rank(const ir::Mesh& original, int64_t reduced_rank) const {
  ir::Mesh rm = reduced.plan.mesh;
  ir::Coord c = rm.coord_of(reduced_rank);
  for (size_t k = 0; k < c.size() && k < axes.size(); ++k) c[k] = axes[k].orig_of[static_cast<size_t>(c[k])];
  return original.rank_of(c);
}

std::string Result::original_rank_str(const ir::Mesh& original, int64_t reduced_rank) const {
  return original.rank_str(original_rank(original, reduced_rank));
}

// An integer literal at which a program slices a dim whose extent is a size
// (`slice offset 2` of a dim of extent F): found once, before the rounds.
struct IndexLit {
  int64_t value;
  ir::DimExpr extent;
  std::string where;
};

std::vector<IndexLit> index_literals(const ir::Case& c, const ir::Bindings& base) {
  std::vector<IndexLit> out;
  for (const auto& prog : c.plan.programs) {
    std::optional<ir::TypeMap> types;  // inferred only for a program with such a slice
    walk_ops(prog.graph, [&](const ir::Op& op) {
      if (op.kind != "slice" || op.operands.empty()) return;
      const ir::Attr* d = op.attr("dim");
      if (!d || !std::holds_alternative<ir::DimExpr>(*d) || !std::get<ir::DimExpr>(*d).is_const()) return;
      for (const char* key : {"offset", "size"}) {
        const ir::Attr* a = op.attr(key);
        if (!a || !std::holds_alternative<ir::DimExpr>(*a)) continue;
        const ir::DimExpr& e = std::get<ir::DimExpr>(*a);
        if (!e.is_const() || e.const_value() < 2) continue;
        if (!types) {
          ir::DiagList ignored;
          types = ir::check_graph(prog.graph, base, &c.plan.mesh, ir::Diag{}, ignored);
        }
        auto t = types->find(op.operands[0]);
        if (t == types->end()) continue;
        int64_t dim = std::get<ir::DimExpr>(*d).const_value();
        const auto rank = static_cast<int64_t>(t->second.shape.size());
        if (dim < 0) dim += rank;
        if (dim < 0 || dim >= rank || t->second.shape[static_cast<size_t>(dim)].is_const()) continue;
        out.push_back({e.const_value(), t->second.shape[static_cast<size_t>(dim)],
                       "program " + prog.name + " op " + op.label() + " attribute " + key});
      }
    });
  }
  return out;
}

// A literal slice offset or size that is a simple fraction k/j of the dim's
// extent at one of the sizes (original or reduced) but not at the other: a
// plan that hard-codes the column where a fused projection splits (2, where
// F/2 = 4) is right only at the reduced F = 4, and one that hard-codes the
// right 4 would look wrong there. The extent's sizes are kept.
void index_literal_pins(const std::vector<IndexLit>& lits, const ir::Bindings& orig, const ir::Bindings& now,
                        Why& pins) {
  for (const auto& lit : lits) {
    int64_t xo = 0, xn = 0;
    if (!lit.extent.try_eval(orig, xo) || !lit.extent.try_eval(now, xn) || xo == xn) continue;
    std::set<std::string> syms;
    lit.extent.symbols(syms);
    const std::string x = lit.extent.str();
    const bool bare = x.find_first_of("+-*/%") == std::string::npos;
    // Matches at the sizes as given are reported first: they say what the
    // literal stands for.
    for (const bool given : {true, false})
      for (int64_t j = 1; j <= 4; ++j)
        for (int64_t k = 1; k <= j; ++k) {
          const bool at_orig = (k * xo) % j == 0 && (k * xo) / j == lit.value;
          const bool at_now = (k * xn) % j == 0 && (k * xn) / j == lit.value;
          if (at_orig == at_now || at_orig != given) continue;
          const std::string frac = (k == 1 ? "" : std::to_string(k) + "*") + (bare ? x : "(" + x + ")") +
                                   (j == 1 ? "" : "/" + std::to_string(j));
          for (const auto& s : syms)
            if (!s.empty() && s[0] != '$')
              pins.emplace(s, "the literal " + std::to_string(lit.value) + " in " + lit.where + " equals " + frac +
                                  (at_orig ? " as given but not reduced" : " reduced but not as given") +
                                  "; a smaller " + s + " would change what it means");
        }
  }
}

// Point-to-point tags. A message goes to the first receive with its peer
// and tag, so whether two sends (or two receives) of a program can carry
// one tag decides which value each receive gets. A stage's activations sent
// with tag `$mb` and its labels with `$mb+4` are apart at 2 or 4
// microbatches and collide at 8: the reduced instance would not show the
// swap. So for each two sites of a program, the tags they take over their
// loops and the coordinates their tags read must overlap at the reduced
// sizes exactly when they do as given; else the sizes of their counts and
// tags are kept. (Sites whose tag sets are too large to list are left to
// the second look.)
struct TagSite {
  const ir::Op* op;
  bool send;
  std::vector<std::pair<std::string, ir::DimExpr>> loops;  // enclosing loops: var, count
};

std::vector<std::vector<TagSite>> tag_sites(const ir::Case& c) {
  std::vector<std::vector<TagSite>> out;
  for (const auto& prog : c.plan.programs) {
    std::vector<TagSite> sites;
    std::vector<std::pair<std::string, ir::DimExpr>> loops;
    std::function<void(const ir::Graph&)> walk = [&](const ir::Graph& g) {
      for (const auto& op : g.ops) {
        if ((op.kind == "send" || op.kind == "recv") && op.attr("tag") &&
            std::holds_alternative<ir::DimExpr>(*op.attr("tag")))
          sites.push_back({&op, op.kind == "send", loops});
        if (op.kind == "loop" && !op.regions.empty() && op.attr("var") && op.attr("count")) {
          loops.emplace_back(std::get<std::string>(*op.attr("var")), std::get<ir::DimExpr>(*op.attr("count")));
          walk(op.regions[0]);
          loops.pop_back();
        }
      }
    };
    walk(prog.graph);
    if (sites.size() > 1) out.push_back(std::move(sites));
  }
  return out;
}

// Every tag a site takes under `b` (its loops' values, and every coordinate
// of each axis its tag reads); nullopt past `limit` evaluations.
// The tags a site takes over its loops, with the coordinates in `b` (`$tp`
// bound): nullopt past `budget` evaluations (counted down) or where a count
// or the tag does not evaluate.
std::optional<std::set<int64_t>> tags_of(const TagSite& t, const ir::Bindings& b, size_t& budget) {
  const ir::DimExpr& tag = std::get<ir::DimExpr>(*t.op->attr("tag"));
  std::vector<std::pair<std::string, int64_t>> ranges;
  size_t total = 1;
  for (const auto& [var, count] : t.loops) {
    int64_t n = 0;
    if (!count.try_eval(b, n) || n < 0) return std::nullopt;
    if (n == 0) return std::set<int64_t>{};
    ranges.emplace_back("$" + var, n);
    total *= static_cast<size_t>(n);
    if (total > budget) return std::nullopt;
  }
  budget -= total;
  std::set<int64_t> out;
  ir::Bindings at = b;
  for (size_t k = 0; k < total; ++k) {
    size_t rest = k;
    for (const auto& [name, n] : ranges) {
      at[name] = static_cast<int64_t>(rest % static_cast<size_t>(n));
      rest /= static_cast<size_t>(n);
    }
    int64_t v = 0;
    if (!tag.try_eval(at, v)) return std::nullopt;
    out.insert(v);
  }
  return out;
}

bool overlap(const std::set<int64_t>& a, const std::set<int64_t>& b) {
  auto i = a.begin(), j = b.begin();
  while (i != a.end() && j != b.end()) {
    if (*i == *j) return true;
    *i < *j ? ++i : ++j;
  }
  return false;
}

// Whether two sites of one program (one rank: the coordinates are shared)
// can carry one tag on some rank: nullopt past `limit` evaluations. Tags are
// compared rank by rank: `$dp*M+$mb` and `$dp*M+$mb+4` meet on every rank at
// M = 8 and on none at M = 4, while pooled over dp they meet at both.
std::optional<bool> tags_meet(const TagSite& x, const TagSite& y, const ir::Bindings& b, const ir::Mesh& mesh,
                              size_t limit) {
  std::set<std::string> syms;
  std::get<ir::DimExpr>(*x.op->attr("tag")).symbols(syms);
  std::get<ir::DimExpr>(*y.op->attr("tag")).symbols(syms);
  std::vector<std::pair<std::string, int64_t>> coords;
  size_t total = 1;
  for (const auto& s : syms)
    if (s.size() > 1 && s[0] == '$' && mesh.axis_index(s.substr(1))) {
      auto it = b.find(s.substr(1));
      if (it == b.end() || it->second < 1) return std::nullopt;
      coords.emplace_back(s, it->second);
      total *= static_cast<size_t>(it->second);
      if (total > limit) return std::nullopt;
    }
  size_t budget = limit;
  ir::Bindings at = b;
  for (size_t k = 0; k < total; ++k) {
    size_t rest = k;
    for (const auto& [name, n] : coords) {
      at[name] = static_cast<int64_t>(rest % static_cast<size_t>(n));
      rest /= static_cast<size_t>(n);
    }
    auto a = tags_of(x, at, budget);
    if (!a) return std::nullopt;
    auto c = tags_of(y, at, budget);
    if (!c) return std::nullopt;
    if (overlap(*a, *c)) return true;
  }
  return false;
}

void tag_pins(const std::vector<std::vector<TagSite>>& progs, const ir::Bindings& orig, const ir::Bindings& now,
              const ir::Mesh& mesh, Why& pins) {
  constexpr size_t kLimit = 1 << 20;
  for (const auto& sites : progs)
    for (size_t i = 0; i < sites.size(); ++i)
      for (size_t j = i + 1; j < sites.size(); ++j) {
        if (sites[i].send != sites[j].send) continue;
        const std::optional<bool> a = tags_meet(sites[i], sites[j], orig, mesh, kLimit),
                                  r = tags_meet(sites[i], sites[j], now, mesh, kLimit);
        if (a && r && *a == *r) continue;
        std::set<std::string> syms;
        for (const TagSite* t : {&sites[i], &sites[j]}) {
          std::get<ir::DimExpr>(*t->op->attr("tag")).symbols(syms);
          for (const auto& l : t->loops) l.second.symbols(syms);
        }
        // Too many to compare: kept, as they would be if they differed.
        const std::string why = "the tags of " + sites[i].op->label() + " and " + sites[j].op->label() +
                                (!a || !r ? " are too many to compare (more than " + std::to_string(kLimit) + ")"
                                 : *a     ? " coincide as given but not reduced"
                                          : " coincide reduced but not as given") +
                                "; a message would go to another receive";
        for (const auto& x : syms)
          if (!x.empty() && x[0] != '$') pins.emplace(x, why);
      }
}

// An index term that would coincide with a size that differs from it as
// given keeps a size that tells them apart: the dims of one and not the
// other, else the smallest such axis, else every reduced size of both.
// Returns true when it raised a floor (a dim of one term and not the other,
// the index term's first; else an axis), else pins every reduced size of both.
bool coincidence_pins(const SizeTerms& sizes, const ir::Bindings& now,
                      const std::map<std::string, std::pair<int64_t, int64_t>>& changed, const ir::Mesh& mesh,
                      std::map<std::string, int64_t>& floors, Why& floor_why, Why& pins, bool ordered) {
  std::optional<Coincidence> co;
  if (count_coincidences(sizes, now, &co, ordered) == 0 || !co || !co->other) return false;
  if (std::getenv("PARITY_REDUCE_TRACE")) std::fprintf(stderr, "  coincide: %s\n", co->str().c_str());
  std::set<std::string> a, b, diff;
  co->index->expr.symbols(a);
  co->other->expr.symbols(b);
  if (co->value != co->other_value || (co->region && co->index->given != co->other->given)) {
    // In reverse order: raise a reduced size that moves the term larger as
    // given up, or the smaller down, and neither the other way (a dim before
    // an axis: the axes' coordinates multiply the ranks).
    const SizeTerms::Term* big = co->index->given > co->other->given ? co->index : co->other;
    const SizeTerms::Term* small = big == co->index ? co->other : co->index;
    std::set<std::string> all = a;
    all.insert(b.begin(), b.end());
    for (bool axes : {false, true})
      for (const auto& x : all) {
        if (!changed.count(x) || mesh.axis_index(x).has_value() != axes) continue;
        if (axes ? now.at(x) + 1 > changed.at(x).first : now.at(x) + 1 >= changed.at(x).first) continue;
        int up = direction(big->expr, x), down = direction(small->expr, x);
        if (up == 2 || down == 2 || up < 0 || down > 0 || (up == 0 && down == 0)) continue;
        floors[x] = now.at(x) + 1;
        floor_why[x] = "at " + x + " = " + std::to_string(now.at(x)) + ", " + co->str() +
                       (co->region ? "" : "; an index reading one for the other would pass or leave the instance invalid");
        return true;
      }
    // No size moves it the right way. A window in another region reads
    // other data: its sizes are kept. Else the instance stays as it is.
    if (co->region)
      for (const auto& x : all)
        if (changed.count(x)) pins.emplace(x, co->str());
    return false;
  }
  if (co->region) {  // on a layout position as given, off it reduced
    a.insert(b.begin(), b.end());
    for (const auto& x : a)
      if (changed.count(x)) pins.emplace(x, co->str());
    return false;
  }
  for (const auto& x : a)
    if (!b.count(x)) diff.insert(x);
  for (const auto& x : b)
    if (!a.count(x)) diff.insert(x);
  for (const auto* side : {&a, &b})
    for (const auto& x : *side)
      if (diff.count(x) && changed.count(x) && !mesh.axis_index(x) && now.at(x) + 1 < changed.at(x).first) {
        floors[x] = now.at(x) + 1;
        floor_why[x] = "at " + x + " = " + std::to_string(now.at(x)) + ", " + co->str() + "; an index reading one for the other would pass";
        return true;
      }
  // Else the reduced axis of the two with the larger size grows (dp 64 -> 4
  // beside tp 8 -> 2).
  std::string axis;
  for (const auto& x : diff)
    if (changed.count(x) && mesh.axis_index(x) && now.at(x) + 1 <= changed.at(x).first &&
        (axis.empty() || changed.at(x).first > changed.at(axis).first))
      axis = x;
  if (!axis.empty()) {
    floors[axis] = now.at(axis) + 1;
    floor_why[axis] = "at " + axis + " = " + std::to_string(now.at(axis)) + ", " + co->str() + "; an index reading one for the other would pass";
    return true;
  }
  std::vector<std::string> pick;
  if (pick.empty()) {
    a.insert(b.begin(), b.end());
    for (const auto& x : a)
      if (changed.count(x)) pick.push_back(x);
  }
  const std::string why = "reducing it would make " + co->str() + ", and an index reading one for the other would pass";
  for (const auto& x : pick) pins.emplace(x, why);
  return false;
}

Result reduce_case(const ir::Case& c, const Options& opt) {
  Result r;
  // Returned when nothing is reduced: the case as given (copied only then).
  auto unchanged = [&]() -> Result {
    r.reduced = c;
    return std::move(r);
  };
  for (const auto& a : c.plan.mesh.axes) {
    AxisMap m{a.name, a.size, a.size, {}};
    for (int64_t v = 0; v < a.size; ++v) m.orig_of.push_back(v);
    r.axes.push_back(m);
  }
  if (!c.spec || c.plan.programs.empty()) return unchanged();

  Why blocked, frozen;
  axis_blockers(c, blocked, frozen);
  loop_blockers(c, frozen);
  constant_index_blockers(c, blocked, frozen);
  coordinate_data_blockers(c, blocked, frozen);
  id_offset_blockers(c, blocked, frozen);
  replicated_sum_blockers(c, blocked);
  if (!opt.mesh)
    for (const auto& a : c.plan.mesh.axes) blocked.emplace(a.name, "mesh reduction is off");
  for (const auto& [k, why] : opt.keep_sizes) (c.plan.mesh.axis_index(k) ? blocked : frozen).emplace(k, why);
  std::map<std::string, int64_t> dims = all_dims(c);
  if (!opt.shape)
    for (const auto& [k, v] : dims) frozen.emplace(k, "shape reduction is off");
  ir::Bindings orig_base = dims;
  for (const auto& a : c.plan.mesh.axes) orig_base[a.name] = a.size;
  const std::vector<IndexLit> index_lits = index_literals(c, orig_base);
  const std::vector<IdLit> id_lits = id_literals(c, orig_base);
  const std::vector<MeanCount> means = mean_counts(c, orig_base);
  const SizeTerms sizes = size_terms(c, orig_base, opt.second_look);
  const std::vector<std::vector<TagSite>> tags = tag_sites(c);
  const auto count_exprs = loop_count_exprs(c);
  const std::vector<SelectionSite> selections = selection_sites(c, orig_base, opt.given_spec_types, opt.given_types);
  std::map<std::string, int64_t> floors;  // dims raised to keep sizes apart
  const std::set<int64_t> index_term_lits = index_term_literals(c);
  int floor_rounds = 0;
  Why floor_why;  // the last coincidence that raised each floor

  // When the reduced instance does not validate: the sizes tried kept, one
  // at a time, and the first failure's message.
  std::vector<std::string> retry;
  size_t next_retry = 0;
  std::optional<std::string> trial;
  std::string first_failure;
  bool pad_axes = false;  // after a failure: reduced axes grown to divide their sizes
  bool all_kept = false;  // after every single size failed: all of them kept at once
  // Rounds: up to 24 for pins, one to grow axes, one per size kept in a
  // retry, one with all of them.
  for (int round = 0; round < 26 + static_cast<int>(retry.size()); ++round) {
    Result t;
    t.reduced = c;
    t.axes = compress_axes(c.plan, blocked, opt.keep, t, pad_axes, floors);
    apply_axes(t.reduced.plan, t.axes);
    std::map<std::string, int64_t> nd = shrink_dims(t.reduced, orig_base, dims, frozen, floors, sizes.ties, opt.least);
    std::map<std::string, std::pair<int64_t, int64_t>> changed;
    for (const auto& m : t.axes)
      if (m.to != m.from) changed[m.axis] = {m.from, m.to};
    for (const auto& [k, v] : nd)
      if (v != dims.at(k)) changed[k] = {dims.at(k), v};
    std::set<std::string> plan_sizes;
    for (const auto& a : c.plan.mesh.axes) plan_sizes.insert(a.name);
    for (const auto& [k, why] : loop_counts(c)) plan_sizes.insert(k);
    Why pins = literal_pins(c, changed, orig_base, plan_sizes, opt.refute,
                            opt.refute && opt.reread_literals ? &t.readings : nullptr, means,
                            opt.generalize_literals ? &t.generalized : nullptr);
    // A dim kept at its size while an axis dividing it shrinks would make
    // every shard larger than in the original: keep that axis too.
    {
      ir::Bindings nb;
      for (const auto& a : t.reduced.plan.mesh.axes) nb[a.name] = a.size;
      for (const auto& [k, v] : nd) nb[k] = v;
      index_literal_pins(index_lits, orig_base, nb, pins);
      id_literal_pins(id_lits, orig_base, nb, pins);
      tag_pins(tags, orig_base, nb, c.plan.mesh, pins);
      Why no_pins;  // the second look's instance raises floors only
      // A top-k keeps a choice in the instances that VERIFIED rests on; an
      // instance only searched for a counterexample may select everything.
      if (floor_rounds < (opt.second_look ? 16 : 64) &&
          (loop_count_floors(count_exprs, orig_base, nb, changed, c.plan.mesh, floors, floor_why) ||
           index_literal_floors(index_term_lits, nb, changed, floors, floor_why) ||
           (!opt.refute && selection_floors(selections, nb, changed, floors, floor_why)) ||
           coincidence_pins(sizes, nb, changed, c.plan.mesh, floors, floor_why, opt.second_look ? no_pins : pins,
                            opt.second_look))) {
        ++floor_rounds;
        if (std::getenv("PARITY_REDUCE_TRACE")) {
          std::string line = "floor round:";
          for (const auto& [k, v] : changed) line += " " + k + "=" + std::to_string(v.second);
          for (const auto& [k, v] : floors) line += " floor " + k + ">=" + std::to_string(v);
          std::fprintf(stderr, "%s\n", line.c_str());
        }
        --round;  // raising a floor is not one of the rounds for pins
        continue;
      }
      Seen seen;
      for_each_expr(t.reduced, [&](const ir::DimExpr& e, const Where& where) {
        if (!seen.insert(e.id()).second) return;
        // A remainder or difference of sizes that is zero on one side only:
        // the plan as given pads (or slices, or branches) where the reduced
        // one does not, or the other way (a flat buffer of 2*H*F = 120
        // padded to dp = 64 by 8, not padded at dp = 2; rows NH*D = 126
        // padded to HP = 128 by HP - NH*D, not padded at HP = NH*D = 4),
        // where padding at the wrong end cannot show. Its sizes are kept.
        std::vector<ir::DimExpr> mods;
        remainders(e, mods);
        // A remainder is in the fragment only where it is 0 or its operand
        // at both sizes (there it is a polynomial in the sizes, which the
        // reduction's argument needs); one that wraps (`(B/dp) % 6` is 2 at
        // B/dp = 8 and B/dp at B/dp = 2 or 3) is periodic, and no smaller
        // instance reproduces it. Its sizes are kept.
        auto wraps = [&](const ir::DimExpr& m, const ir::Bindings& at, int64_t v) {
          int64_t x = 0;
          return m.kind() == ir::DimExpr::Kind::Mod && v != 0 && !(m.lhs().try_eval(at, x) && x == v);
        };
        for (const auto& m : mods) {
          int64_t ov, nv;
          if (has_coord(m) || !m.try_eval(orig_base, ov) || !m.try_eval(nb, nv)) continue;
          const bool wrap = wraps(m, orig_base, ov) || wraps(m, nb, nv);
          if ((ov == 0) == (nv == 0) && !wrap) continue;
          std::set<std::string> syms;
          m.symbols(syms);
          for (const auto& x : syms)
            if (changed.count(x))
              pins.emplace(x, std::string(m.kind() == ir::DimExpr::Kind::Mod ? "the remainder " : "the difference ") +
                                  m.str() + " (" + where.str() + ") is " + std::to_string(ov) +
                                  " as given and " + std::to_string(nv) +
                                  (wrap ? " reduced, and wraps: a remainder is reduced only where it is 0 or its "
                                          "operand at both sizes"
                                        : " reduced: the plan would take another path where it pads or divides"));
        }
        std::vector<ir::DimExpr> ds;
        divisions(e, ds);
        for (const auto& d : ds) {
          int64_t ov, nv;
          if (has_coord(d) || !d.try_eval(orig_base, ov) || !d.try_eval(nb, nv) || nv <= ov) continue;
          // A dim of it lowered (and kept above its least value to keep
          // sizes apart, distinct_sizes.h): not a kept dim.
          std::set<std::string> num;
          d.lhs().symbols(num);
          if (std::any_of(num.begin(), num.end(), [&](const std::string& x) { return nd.count(x) && nd.at(x) < dims.at(x); }))
            continue;
          std::set<std::string> den;
          d.rhs().symbols(den);
          for (const auto& a : den)
            if (c.plan.mesh.axis_index(a))
              pins.emplace(a, "shrinking it would enlarge " + d.str() + " (" + where.str() + ") from " + std::to_string(ov) +
                                  " to " + std::to_string(nv) + " while its dims are kept");
        }
      });
    }
    if (std::getenv("PARITY_REDUCE_TRACE")) {
      std::string line = "round " + std::to_string(round) + ":";
      for (const auto& [k, v] : changed) line += " " + k + "=" + std::to_string(v.second);
      for (const auto& [k, v] : floors) line += " floor " + k + ">=" + std::to_string(v);
      for (const auto& [k, v] : pins) line += "\n  pin " + k + ": " + v;
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    bool more = false;
    for (const auto& [s, why] : pins) {
      bool is_axis = c.plan.mesh.axis_index(s).has_value();
      more |= is_axis ? blocked.emplace(s, why).second : frozen.emplace(s, why).second;
    }
    if (more) continue;
    for (auto& [k, v] : t.reduced.plan.dims)
      if (nd.count(k)) v = nd.at(k);
    for (auto& [k, v] : t.reduced.spec->dims)
      if (nd.count(k)) v = nd.at(k);
    for (const auto& m : t.axes)
      if (m.to != m.from) t.applied.push_back("mesh axis " + m.axis + " " + std::to_string(m.from) + " -> " + std::to_string(m.to));
    for (const auto& [k, v] : nd)
      if (v != dims.at(k)) {
        t.applied.push_back("dim " + k + " " + std::to_string(dims.at(k)) + " -> " + std::to_string(v));
        t.dims[k] = {dims.at(k), v};
      }
    for (const auto& [k, why] : frozen)
      if (dims.count(k) && dims.at(k) > 2 && !(opt.shape == false)) t.kept.push_back("dim " + k + " kept at " + std::to_string(dims.at(k)) + ": " + why);
    for (const auto& [sym, why] : floor_why) {
      const std::string k = sym;  // a structured binding is not captured by older compilers
      int64_t given = 0, now = 0;
      if (auto m = std::find_if(t.axes.begin(), t.axes.end(), [&](const AxisMap& a) { return a.axis == k; });
          m != t.axes.end()) {
        given = m->from;
        now = m->to;
      } else if (dims.count(k)) {
        given = dims.at(k);
        now = nd.at(k);
      }
      if (given == 0) continue;
      const std::string name = (dims.count(k) ? "dim " : "") + k;
      t.kept.push_back(now == given ? name + " kept at " + std::to_string(given) + ": " + why
                                    : name + " reduced to " + std::to_string(now) + " only: " + why);
    }
    t.changed = !t.applied.empty();
    if (opt.sizes_only) {
      t.reduced = ir::Case{};
      return t;
    }
    if (!t.changed) {
      r.kept = t.kept;
      return unchanged();
    }
    // The reduced instance must itself be well formed (shapes, schedule).
    ir::DiagList d =
        ir::validate_case(t.reduced, "", ir::kScheduleBudget, opt.threads, &t.spec_types, &t.program_types);
    if (!d.empty()) {
      // Placements that cover a spec output as given (validated) but leave
      // part of it unplaced reduced (a row offset `$tp*(H/tp)` where `NH*D/tp`
      // is meant, equal as given): every size of that output's shape and of
      // the boxes placed on it is kept (an axis whose coordinate a box
      // reads, the count of a loop whose index it reads), all at once.
      if (const std::string& o = d.items[0].spec_value; !o.empty() && !opt.second_look) {
        const std::set<std::string> sizes = output_box_sizes(c, o, t.spec_types);
        const std::string why = "the instance reduced with it leaves part of spec output '" + o + "' unplaced (" +
                                d.items[0].message + ")";
        bool more = false;
        for (const auto& x : sizes)
          if (c.plan.mesh.axis_index(x) ? blocked.emplace(x, why).second
                                        : dims.count(x) && frozen.emplace(x, why).second)
            more = true;
        if (more) continue;
      }
      // Keep, one at a time, a size the failing op depends on.
      if (first_failure.empty()) {
        first_failure = d.items[0].message;
        std::string tried;
        for (const auto& a : t.applied) tried += (tried.empty() ? "" : ", ") + a;
        if (!tried.empty()) first_failure += " with " + tried;
        retry = sizes_of_failing_op(c, d.items[0], dims);
        // First the reduced axes grown to divisors of their sizes (a dim
        // divisible by 64 experts' ranks is not by 5 of them, and may be by 8).
        bool grows = false;
        for (const auto& m : t.axes) grows |= m.to != m.from && m.from % m.to != 0;
        if (grows) {
          pad_axes = true;
          continue;
        }
      }
      // Past growing axes, the next step keeps sizes as given.
      if (opt.second_look) {
        r.kept = t.kept;
        Result u = unchanged();
        u.invalid_at = first_failure;
        return u;
      }
      if (trial) {
        blocked.erase(*trial);
        frozen.erase(*trial);
        trial.reset();
      }
      while (next_retry < retry.size() && !trial) {
        const std::string& s = retry[next_retry++];
        const std::string why = "the instance reduced with it does not validate (" + first_failure + ")";
        if (c.plan.mesh.axis_index(s) ? blocked.emplace(s, why).second : frozen.emplace(s, why).second) trial = s;
      }
      if (trial) continue;
      // A hard-coded extent may need two sizes at once (a slice of 20 rows
      // of an A*C = 4*6 tensor fits neither 2*6 nor 4*2).
      if (!all_kept && retry.size() > 1) {
        all_kept = true;
        const std::string why =
            "kept with the failing op's other sizes: with any one of them kept alone the reduced instance does not validate (" +
            first_failure + ")";
        for (const auto& s : retry)
          c.plan.mesh.axis_index(s) ? blocked.emplace(s, why) : frozen.emplace(s, why);
        continue;
      }
      r.kept = t.kept;
      r.kept.push_back("the reduced instance does not validate (" + first_failure + "); the plan is verified as given");
      return unchanged();
    }
    return t;
  }
  r.kept.push_back("literals pin too many symbols; the plan is verified as given");
  return unchanged();
}

}  // namespace parity::reduce
