#include "corpus/bugs.h"

#include <algorithm>
#include <functional>
#include <set>

#include "corpus/builder.h"
#include "corpus/models.h"
#include "ir/error.h"
#include "ir/validate.h"

namespace parity::corpus {

namespace {

[[noreturn]] void bad(const std::string& msg) { throw ir::InvalidInput("bug: " + msg); }

// ---------------------------------------------------------------------------
// Locating ops

// An op inside a program (possibly in a loop body).
struct Loc {
  ir::Program* prog = nullptr;
  ir::Graph* g = nullptr;
  size_t i = 0;
  bool in_mb_loop = false;
  ir::Op& op() const { return g->ops[i]; }
};

// Whether a value name belongs to layer `l`: `l3.x`, `d_l3.x`, `grad.reduced.l3.x`.
bool in_layer(const std::string& name, int64_t l) {
  const std::string pre = "l" + std::to_string(l) + ".";
  for (size_t pos = name.find(pre); pos != std::string::npos; pos = name.find(pre, pos + 1))
    if (pos == 0 || name[pos - 1] == '.' || name[pos - 1] == '_') return true;
  return false;
}

bool starts(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

struct Ctx {
  ir::Case& c;
  BugSite site;
  std::set<std::string> progs;  // programs the bug may touch

  using Pred = std::function<bool(const ir::Op&)>;

  std::vector<Loc> find(const Pred& pred) {
    std::vector<Loc> out;
    std::function<void(ir::Program&, ir::Graph&, bool)> walk = [&](ir::Program& p, ir::Graph& g, bool mb) {
      for (size_t i = 0; i < g.ops.size(); ++i) {
        ir::Op& op = g.ops[i];
        if (pred(op)) out.push_back(Loc{&p, &g, i, mb});
        for (auto& r : op.regions) {
          const ir::Attr* v = op.attr("var");
          bool is_mb = v && std::holds_alternative<std::string>(*v) && std::get<std::string>(*v) == "mb";
          walk(p, r, mb || is_mb);
        }
      }
    };
    for (auto& p : c.plan.programs)
      if (progs.count(p.name)) walk(p, p.graph, false);
    return out;
  }

  // Ops matching `pred` in the chosen layer; with no layer chosen, those of
  // layer 0 if any (rather than the embedding), else all, in program order.
  std::vector<Loc> find_layer(const Pred& pred) {
    auto of = [&](int64_t l) {
      return find([&](const ir::Op& op) {
        return pred(op) && !op.results.empty() && in_layer(op.results[0], l);
      });
    };
    if (site.layer) return of(*site.layer);
    auto v = of(0);
    return v.empty() ? find(pred) : v;
  }

  Loc first(const Pred& pred, const std::string& needs) {
    auto v = find_layer(pred);
    if (v.empty())
      bad("'" + site.name + "' does not apply to this case: it needs " + needs +
          (site.layer ? " in layer " + std::to_string(*site.layer) : ""));
    return v[0];
  }
};

std::vector<std::string> axes_of(const ir::Op& op) {
  const ir::Attr* a = op.attr("axes");
  return a && std::holds_alternative<ir::Strings>(*a) ? std::get<ir::Strings>(*a) : ir::Strings{};
}

bool has_axis(const ir::Op& op, const std::string& axis) {
  auto v = axes_of(op);
  return std::find(v.begin(), v.end(), axis) != v.end();
}

bool result_is(const ir::Op& op, const std::string& name) {
  return !op.results.empty() && op.results[0] == name;
}
bool result_starts(const ir::Op& op, const std::string& prefix) {
  return !op.results.empty() && starts(op.results[0], prefix);
}
// A result named `<anything>.<suffix>` or `l<k>.<suffix>`.
bool result_ends(const ir::Op& op, const std::string& suffix) {
  if (op.results.empty()) return false;
  const std::string& r = op.results[0];
  return r.size() > suffix.size() && r.compare(r.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---------------------------------------------------------------------------
// Editing

void names_in(const ir::Graph& g, std::set<std::string>& out) {
  out.insert(g.inputs.begin(), g.inputs.end());
  for (const auto& op : g.ops) {
    out.insert(op.results.begin(), op.results.end());
    for (const auto& r : op.regions) names_in(r, out);
  }
}

std::string fresh(const ir::Program& p, const std::string& base) {
  std::set<std::string> used;
  names_in(p.graph, used);
  std::string n = base;
  for (int k = 1; used.count(n); ++k) n = base + "." + std::to_string(k);
  return n;
}

void rename_uses(ir::Graph& g, const std::string& from, const std::string& to) {
  for (auto& op : g.ops) {
    for (auto& o : op.operands)
      if (o == from) o = to;
    for (auto& r : op.regions) rename_uses(r, from, to);
  }
  for (auto& o : g.outputs)
    if (o == from) o = to;
}

// Uses of `from` after position `pos` of `g` now read `to`.
void rewire(ir::Graph& g, size_t pos, const std::string& from, const std::string& to) {
  for (size_t k = pos + 1; k < g.ops.size(); ++k) {
    for (auto& o : g.ops[k].operands)
      if (o == from) o = to;
    for (auto& r : g.ops[k].regions) rename_uses(r, from, to);
  }
  for (auto& o : g.outputs)
    if (o == from) o = to;
}

ir::TypeMap types_of(const ir::Plan& p, const ir::Program& prog) {
  ir::Bindings b = p.dims;
  for (const auto& a : p.mesh.axes) b[a.name] = a.size;
  ir::DiagList d;
  return ir::check_graph(prog.graph, b, &p.mesh, ir::Diag{}, d);
}

ir::Op make(const std::string& kind, std::vector<std::string> operands, const Attrs& attrs,
            std::string result) {
  ir::Op o;
  o.kind = kind;
  o.operands = std::move(operands);
  for (const auto& [k, v] : attrs) o.attrs[k] = v.value;
  if (!result.empty()) o.results = {std::move(result)};
  return o;
}

// Inserts `ops` after `at` in its graph; returns the position of the last.
size_t insert_after(Loc& at, std::vector<ir::Op> ops) {
  size_t pos = at.i + 1;
  for (auto& o : ops) at.g->ops.insert(at.g->ops.begin() + static_cast<long>(pos++), std::move(o));
  return pos - 1;
}

// The value `orig` in microbatch `site.mb` only, `mut` in the others:
// orig + [mb == K] * (mut - orig), the indicator sliced out of a constant.
std::vector<ir::Op> select_mb(Ctx& x, const Loc& at, const std::string& orig, const std::string& mut,
                              std::string& out) {
  int64_t m = x.c.plan.dims.count("M") ? x.c.plan.dims.at("M") : 1;
  int64_t k = *x.site.mb;
  if (k < 0 || k >= m) bad("@mb=" + std::to_string(k) + " is outside 0.." + std::to_string(m - 1));
  auto types = types_of(x.c.plan, *at.prog);
  std::vector<ir::Op> ops;
  // One base name, numbered: the ops are not in the graph yet.
  std::string base = fresh(*at.prog, "bug.mb");
  std::vector<std::string> fills;
  int n = 0;
  auto name = [&](const std::string& what) { return base + "." + what + std::to_string(n++); };
  if (k > 0) {
    fills.push_back(name("zeros"));
    ops.push_back(make("fill", {}, {{"value", 0.0}, {"shape", ints({std::to_string(k)})}}, fills.back()));
  }
  fills.push_back(name("one"));
  ops.push_back(make("fill", {}, {{"value", 1.0}, {"shape", ints({"1"})}}, fills.back()));
  if (k + 1 < m) {
    fills.push_back(name("zeros"));
    ops.push_back(make("fill", {}, {{"value", 0.0}, {"shape", ints({std::to_string(m - k - 1)})}}, fills.back()));
  }
  std::string vec = fills[0];
  if (fills.size() > 1) {
    vec = name("onehot");
    ops.push_back(make("concat", fills, {{"dim", 0}}, vec));
  }
  std::string ind = name("ind");
  ops.push_back(make("slice", {vec}, {{"dim", 0}, {"offset", expr("$mb")}, {"size", 1}}, ind));
  if (types.at(orig).rank() == 0) {
    std::string s = name("ind_scalar");
    ops.push_back(make("reshape", {ind}, {{"shape", ints({})}}, s));
    ind = s;
  }
  std::string diff = name("diff");
  ops.push_back(make("sub", {mut, orig}, {}, diff));
  std::string part = name("part");
  ops.push_back(make("mul", {ind, diff}, {}, part));
  out = name("value");
  ops.push_back(make("add", {orig, part}, {}, out));
  return ops;
}

// Replaces the value defined at `at` by `mutated` (ops computing it, the last
// one's result being the new value) for every later use; with @mb only in
// that microbatch. The original op stays (a collective keeps its schedule).
void replace_value(Ctx& x, Loc at, std::vector<ir::Op> mutated) {
  const std::string orig = at.op().results.at(0);
  std::string val = mutated.back().results.at(0);
  size_t last = insert_after(at, std::move(mutated));
  Loc end = at;
  end.i = last;
  if (x.site.mb) {
    if (!at.in_mb_loop) bad("'" + x.site.name + "' at @mb: the value '" + orig + "' is not inside the microbatch loop");
    std::string sel;
    auto ops = select_mb(x, end, orig, val, sel);
    last = insert_after(end, std::move(ops));
    val = sel;
  }
  rewire(*at.g, last, orig, val);
  // The program's claims are about the value it now uses.
  for (auto& pl : x.c.plan.placements)
    if (pl.program == at.prog->name && pl.value == orig) pl.value = val;
}

// A copy of the op at `at` with a fresh result name, edited by `edit`.
ir::Op edited(const Loc& at, const std::function<void(ir::Op&)>& edit) {
  ir::Op o = at.op();
  o.results = {fresh(*at.prog, at.op().results.at(0) + ".bug")};
  o.line = 0;
  edit(o);
  return o;
}

void mutate(Ctx& x, Loc at, const std::function<void(ir::Op&)>& edit) {
  replace_value(x, at, {edited(at, edit)});
}

// Replaces an op's result with `kind(operand k)` (e.g. identity: the op dropped).
void bypass(Ctx& x, Loc at, size_t k = 0) {
  mutate(x, at, [&](ir::Op& o) {
    std::string in = o.operands.at(k);
    o = make("identity", {in}, {}, o.results[0]);
  });
}

}  // namespace

// ---------------------------------------------------------------------------
// MPMD: a rank gets its own copy of its program.

std::string isolate_rank(ir::Plan& p, int64_t rank) {
  if (rank < 0 || rank >= p.mesh.num_ranks())
    bad("@rank=" + std::to_string(rank) + " is outside the mesh of " + std::to_string(p.mesh.num_ranks()) + " ranks");
  const ir::Program* prog = p.program_of(rank);
  if (!prog) bad("rank " + std::to_string(rank) + " runs no program");
  ir::Program orig = *prog;
  ir::Coord c = p.mesh.coord_of(rank);
  std::vector<ir::Program> parts;
  // The chosen rank: every coordinate fixed.
  ir::Program mine = orig;
  mine.name = orig.name + ".rank" + std::to_string(rank);
  for (size_t a = 0; a < c.size(); ++a) mine.ranks.fixed[p.mesh.axes[a].name] = {c[a]};
  // The rest: ranks agreeing with it on axes [0, a) and differing on axis a.
  for (size_t a = 0; a < c.size(); ++a) {
    const std::string& ax = p.mesh.axes[a].name;
    ir::Program rest = orig;
    rest.name = orig.name + ".rest" + std::to_string(a);
    for (size_t b = 0; b < a; ++b) rest.ranks.fixed[p.mesh.axes[b].name] = {c[b]};
    std::vector<int64_t> allowed;
    auto it = orig.ranks.fixed.find(ax);
    for (int64_t v = 0; v < p.mesh.axes[a].size; ++v)
      if (v != c[a] && (it == orig.ranks.fixed.end() || std::count(it->second.begin(), it->second.end(), v)))
        allowed.push_back(v);
    if (allowed.empty()) continue;
    rest.ranks.fixed[ax] = allowed;
    parts.push_back(std::move(rest));
  }
  std::vector<std::string> names = {mine.name};
  for (const auto& q : parts) names.push_back(q.name);
  std::vector<ir::Program> progs;
  for (auto& q : p.programs)
    if (q.name != orig.name) progs.push_back(std::move(q));
  progs.push_back(mine);
  for (auto& q : parts) progs.push_back(std::move(q));
  p.programs = std::move(progs);
  std::vector<ir::Placement> pl;
  for (const auto& x : p.placements) {
    if (x.program != orig.name) {
      pl.push_back(x);
      continue;
    }
    for (const auto& n : names) {
      ir::Placement y = x;
      y.program = n;
      pl.push_back(y);
    }
  }
  p.placements = std::move(pl);
  return mine.name;
}

namespace {

// ---------------------------------------------------------------------------
// The injectors

using Impl = std::function<void(Ctx&)>;

struct Bug {
  BugInfo info;
  Impl apply;
  // The rank a one-rank bug picks when none is given (nullopt: every rank).
  std::function<std::optional<int64_t>(const ir::Plan&)> default_rank;
};

bool is_collective(const ir::Op& op, const char* kind, const std::string& axis) {
  return op.kind == kind && has_axis(op, axis);
}

// The forward allreduce after a row-parallel linear (attention output).
Ctx::Pred tp_exit_allreduce() {
  return [](const ir::Op& op) { return is_collective(op, "allreduce", "tp") && result_ends(op, ".attn.out"); };
}

Ctx::Pred dp_grad_allreduce() {
  return [](const ir::Op& op) {
    return op.kind == "allreduce" && has_axis(op, "dp") && result_starts(op, "grad.reduced.");
  };
}

int64_t dim_value(const ir::Case& c, const std::string& k) {
  auto it = c.plan.dims.find(k);
  return it == c.plan.dims.end() ? 1 : it->second;
}

int64_t axis_size(const ir::Plan& p, const std::string& a) {
  auto i = p.mesh.axis_index(a);
  return i ? p.mesh.axes[*i].size : 1;
}

// A rank of the last pipeline stage (it holds the loss).
std::optional<int64_t> last_stage_rank(const ir::Plan& p) {
  ir::Coord c(p.mesh.axes.size(), 0);
  if (auto i = p.mesh.axis_index("pp")) c[*i] = p.mesh.axes[*i].size - 1;
  return p.mesh.rank_of(c);
}

std::vector<Bug> make_bugs() {
  std::vector<Bug> v;
  auto add = [&](std::string name, std::string desc, std::string needs, Impl f, int exit = 1,
                 std::string err = "") {
    v.push_back(Bug{BugInfo{std::move(name), std::move(desc), std::move(needs), exit, std::move(err)},
                    std::move(f), nullptr});
    return &v.back();
  };

  // Missing and wrong collectives.
  add("missing-allreduce", "the tensor-parallel allreduce after the attention output projection is dropped",
      "tp > 1 without --sp", [](Ctx& x) { bypass(x, x.first(tp_exit_allreduce(), "a tp allreduce")); });
  add("missing-grad-allreduce", "one parameter's data-parallel gradient allreduce is dropped", "dp > 1",
      [](Ctx& x) { bypass(x, x.first(dp_grad_allreduce(), "a dp gradient allreduce")); });
  add("missing-bwd-allreduce",
      "the backward allreduce of Megatron's f (copy to the tp region) is dropped: a missing reduce inside a "
      "fused backward op",
      "tp > 1 without --sp", [](Ctx& x) {
        bypass(x, x.first([](const ir::Op& op) { return is_collective(op, "allreduce", "tp") && result_starts(op, "d_"); },
                          "a backward tp allreduce"));
      });
  add("allreduce-to-allgather", "the tp allreduce after the attention output is an allgather", "tp > 1 without --sp",
      [](Ctx& x) {
        mutate(x, x.first(tp_exit_allreduce(), "a tp allreduce"), [](ir::Op& o) {
          o.kind = "allgather";
          o.attrs.erase("reduce");
          o.attrs["dim"] = ir::DimExpr(int64_t{-1});
        });
      },
      2, "shape rule violated");
  add("allgather-to-allreduce", "a sequence/context-parallel allgather is an allreduce", "--sp or cp > 1",
      [](Ctx& x) {
        mutate(x, x.first([](const ir::Op& op) { return op.kind == "allgather" && !result_starts(op, "new.") && !result_starts(op, "gathered."); },
                          "an activation allgather"),
               [](ir::Op& o) {
                 o.kind = "allreduce";
                 o.attrs.erase("dim");
                 o.attrs["reduce"] = std::string("sum");
               });
      },
      2, "shape rule violated");
  add("wrong-axis", "one parameter's gradient allreduce runs over another mesh axis instead of dp",
      "dp > 1 and another axis", [](Ctx& x) {
        Loc at = x.first(dp_grad_allreduce(), "a dp gradient allreduce");
        std::string other;
        for (const auto& a : x.c.plan.mesh.axes)
          if (a.size > 1 && !has_axis(at.op(), a.name) && other.empty()) other = a.name;
        if (other.empty()) bad("'wrong-axis' needs a mesh axis besides dp");
        mutate(x, at, [&](ir::Op& o) {
          auto axes = axes_of(o);
          std::replace(axes.begin(), axes.end(), std::string("dp"), other);
          o.attrs["axes"] = axes;
        });
      });
  add("ep-grad-over-ep", "expert gradients are also reduced over ep (the expert-data-parallel group is wrong)",
      "ep > 1", [](Ctx& x) {
        Loc at = x.first([](const ir::Op& op) { return op.kind == "identity" && result_starts(op, "grad.") &&
                                                        result_ends(op, ".e_gate"); },
                         "an expert gradient");
        mutate(x, at, [](ir::Op& o) {
          o.kind = "allreduce";
          o.attrs["axes"] = ir::Strings{"ep"};
          o.attrs["reduce"] = std::string("sum");
        });
      });
  add("double-grad-allreduce", "one parameter's gradient is all-reduced twice over dp", "dp > 1", [](Ctx& x) {
    Loc at = x.first(dp_grad_allreduce(), "a dp gradient allreduce");
    ir::Op again = at.op();
    again.operands = {at.op().results[0]};
    again.results = {fresh(*at.prog, at.op().results[0] + ".again")};
    replace_value(x, at, {again});
  });
  add("unsynced-sp-grad", "a norm weight's gradient is not reduced over tp under sequence parallelism", "--sp",
      [](Ctx& x) {
        Loc at = x.first([](const ir::Op& op) {
          return is_collective(op, "allreduce", "tp") && result_starts(op, "grad.reduced.") && result_ends(op, "norm");
        }, "a sequence-parallel norm gradient reduction");
        mutate(x, at, [](ir::Op& o) {
          auto axes = axes_of(o);
          axes.erase(std::remove(axes.begin(), axes.end(), std::string("tp")), axes.end());
          if (axes.empty()) o = make("identity", {o.operands[0]}, {}, o.results[0]);
          else o.attrs["axes"] = axes;
        });
      });
  add("unsynced-grad", "a replicated parameter's gradient is never synchronized (any data axis)",
      "a data-parallel axis", [](Ctx& x) {
        bypass(x, x.first([](const ir::Op& op) { return op.kind == "allreduce" && result_starts(op, "grad.reduced."); },
                          "a gradient reduction"));
      });

  // Megatron's data-parallel gradient group spans dp and cp: a reduction
  // over dp alone leaves each cp rank with its own sequence chunk's gradient.
  add("cp-grad-unsynced",
      "one parameter's gradient is reduced over dp but not over cp (the data-parallel group built "
      "without the context-parallel ranks)",
      "cp > 1", [](Ctx& x) {
        mutate(x,
               x.first(
                   [](const ir::Op& op) {
                     return op.kind == "allreduce" && has_axis(op, "cp") &&
                            result_starts(op, "grad.reduced.");
                   },
                   "a gradient reduction over cp"),
               [](ir::Op& o) {
                 auto axes = axes_of(o);
                 axes.erase(std::remove(axes.begin(), axes.end(), std::string("cp")), axes.end());
                 if (axes.empty())
                   o = make("identity", {o.operands[0]}, {}, o.results[0]);
                 else
                   o.attrs["axes"] = axes;
               });
      });
  add("grad-reduce-max",
      "one parameter's data-parallel gradient all-reduce takes the max instead of the sum (the "
      "wrong reduction op)",
      "dp > 1", [](Ctx& x) {
        mutate(x, x.first(dp_grad_allreduce(), "a dp gradient allreduce"),
               [](ir::Op& o) { o.attrs["reduce"] = std::string("max"); });
      });

  // Scaling.
  add("grad-avg-dp", "gradients are averaged over dp although each rank's loss is already a share of the global mean",
      "dp > 1", [](Ctx& x) {
        mutate(x, x.first(dp_grad_allreduce(), "a dp gradient allreduce"),
               [](ir::Op& o) { o.attrs["reduce"] = std::string("avg"); });
      });
  add("tp-avg", "the tp allreduce after the attention output averages instead of summing", "tp > 1 without --sp",
      [](Ctx& x) {
        mutate(x, x.first(tp_exit_allreduce(), "a tp allreduce"),
               [](ir::Op& o) { o.attrs["reduce"] = std::string("avg"); });
      });
  add("loss-scale-mb", "the backward seed is scaled by 1/M as well (the loss averaged over microbatches twice)",
      "mb > 1", [](Ctx& x) {
        if (dim_value(x.c, "M") < 2) bad("'loss-scale-mb' needs --mb > 1");
        Loc at = x.first([](const ir::Op& op) { return result_is(op, "loss.inv_count"); }, "the loss seed");
        double f = 1.0 / static_cast<double>(dim_value(x.c, "M"));
        ir::Op o = make("scale", {at.op().results[0]}, {{"factor", f}}, fresh(*at.prog, "loss.inv_count.bug"));
        replace_value(x, at, {o});
      });
  // The same double scaling with the context-parallel share: each cp rank's
  // loss is already its tokens' part of the global mean.
  add("loss-scale-cp",
      "the backward seed is scaled by 1/cp as well (the loss averaged over context-parallel ranks "
      "twice)",
      "cp > 1", [](Ctx& x) {
        int64_t cp = axis_size(x.c.plan, "cp");
        if (cp < 2) bad("'loss-scale-cp' needs cp > 1");
        Loc at = x.first([](const ir::Op& op) { return result_is(op, "loss.inv_count"); },
                         "the loss seed");
        ir::Op o = make("scale", {at.op().results[0]}, {{"factor", 1.0 / static_cast<double>(cp)}},
                        fresh(*at.prog, "loss.inv_count.bug"));
        replace_value(x, at, {o});
      });
  // Expert weights see only the tokens routed to them: their gradients are
  // sums over those tokens, not means over the expert-parallel group.
  add("ep-grad-scale",
      "expert gradients are divided by ep (scaled as if averaged over the expert-parallel group)",
      "ep > 1", [](Ctx& x) {
        int64_t ep = axis_size(x.c.plan, "ep");
        if (ep < 2) bad("'ep-grad-scale' needs ep > 1");
        Loc at = x.first(
            [](const ir::Op& op) {
              return op.kind == "identity" && result_starts(op, "grad.") &&
                     result_ends(op, ".e_gate");
            },
            "an expert gradient");
        mutate(x, at, [&](ir::Op& o) {
          o = make("scale", {o.operands.at(0)}, {{"factor", 1.0 / static_cast<double>(ep)}},
                   o.results[0]);
        });
      });
  add("sp-grad-avg",
      "a norm weight's gradient is averaged over tp instead of summed under sequence parallelism",
      "--sp", [](Ctx& x) {
        mutate(x,
               x.first(
                   [](const ir::Op& op) {
                     return is_collective(op, "allreduce", "tp") &&
                            result_starts(op, "grad.reduced.") && result_ends(op, "norm");
                   },
                   "a sequence-parallel norm gradient reduction"),
               [](ir::Op& o) { o.attrs["reduce"] = std::string("avg"); });
      });
  Bug* one = add("scale-one-rank", "one rank scales its loss gradient by 2 (inconsistent scaling on one rank)", "",
                 [](Ctx& x) {
                   Loc at = x.first([](const ir::Op& op) { return result_is(op, "loss.inv_count"); }, "the loss seed");
                   ir::Op o = make("scale", {at.op().results[0]}, {{"factor", 2.0}}, fresh(*at.prog, "loss.inv_count.bug"));
                   replace_value(x, at, {o});
                 });
  one->default_rank = last_stage_rank;
  add("per-microbatch-mean",
      "each microbatch's loss is its own token mean, averaged over microbatches and ranks, instead of the "
      "token-weighted mean of the global batch",
      "mb > 1, tp = 1", [](Ctx& x) {
        int64_t m = dim_value(x.c, "M");
        if (m < 2) bad("'per-microbatch-mean' needs --mb > 1");
        int64_t n = 1;
        for (const char* a : {"dp", "ep", "cp"}) n *= axis_size(x.c.plan, a);
        const double f = 1.0 / static_cast<double>(m * n);
        Loc ce = x.first([](const ir::Op& op) { return op.kind == "cross_entropy" && result_is(op, "loss.ce_sum"); },
                         "a cross_entropy loss (tp = 1)");
        ce.op().attrs["reduction"] = std::string("mean");
        Loc g = x.first([](const ir::Op& op) { return op.kind == "cross_entropy_grad"; }, "the loss gradient");
        std::string w = fresh(*g.prog, "loss.mb_weight");
        g.g->ops.insert(g.g->ops.begin() + static_cast<long>(g.i),
                        make("fill", {}, {{"value", f}, {"shape", ints({})}}, w));
        ++g.i;
        g.op().attrs["reduction"] = std::string("mean");
        g.op().operands[3] = w;
        Loc l = x.first([](const ir::Op& op) { return result_is(op, kLoss); }, "the loss");
        l.op() = make("scale", {l.op().operands[0]}, {{"factor", f}}, l.op().results[0]);
      });
  add("norm-counts-replica", "the global gradient norm counts a tp-replicated parameter once per tp rank",
      "tp > 1, --step clip or adamw", [](Ctx& x) {
        Loc at = x.first([](const ir::Op& op) {
          return op.kind == "reduce_sum" && result_starts(op, "clip.sumsq.") &&
                 (result_ends(op, "norm") || result_ends(op, "norm_w"));
        }, "a replicated parameter in the global norm");
        if (axis_size(x.c.plan, "tp") < 2) bad("'norm-counts-replica' needs tp > 1");
        ir::Op o = make("allreduce", {at.op().results[0]}, {{"axes", strings({"tp"})}, {"reduce", "sum"}},
                        fresh(*at.prog, at.op().results[0] + ".bug"));
        replace_value(x, at, {o});
      });

  // The global norm's sum of squares is left local where parameters or their
  // gradients are sharded: each rank clips with the norm of its own shards.
  add("norm-local", "the all-reduce of the global gradient norm's sum of squares is dropped (each rank clips with its local norm)",
      "tp > 1 or --zero 2/3, --step clip or adamw", [](Ctx& x) {
        bypass(x, x.first([](const ir::Op& op) { return op.kind == "allreduce" && result_starts(op, "clip.group"); },
                          "the all-reduce of the global gradient norm"));
      });
  // Under ZeRO-2/3 the gradients are sharded over dp as well: a norm reduced
  // over the model-parallel axes only misses the other shards.
  add("norm-missing-dp", "the global gradient norm is all-reduced over the model-parallel axes but not over dp, where ZeRO shards the gradients",
      "--zero 2 or 3 with dp > 1", [](Ctx& x) {
        auto ats = x.find([](const ir::Op& op) {
          if (op.kind != "allreduce" || !result_starts(op, "clip.group")) return false;
          const ir::Attr* a = op.attr("axes");
          if (!a || !std::holds_alternative<ir::Strings>(*a)) return false;
          const auto& v = std::get<ir::Strings>(*a);
          return std::find(v.begin(), v.end(), "dp") != v.end();
        });
        if (ats.empty()) bad("'norm-missing-dp' needs a gradient norm reduced over dp (--zero 2 or 3, dp > 1)");
        mutate(x, ats.back(), [](ir::Op& o) {
          ir::Strings axes = std::get<ir::Strings>(*o.attr("axes"));
          axes.erase(std::find(axes.begin(), axes.end(), "dp"));
          if (axes.empty()) {
            o = make("identity", {o.operands.at(0)}, {}, o.results[0]);
          } else {
            o.attrs["axes"] = axes;
          }
        });
      });

  // Pipelines, microbatches, tied parameters.
  add("tied-updated-apart",
      "the tied embedding / LM head gradient all-reduce between the first and last stage is "
      "dropped on the first "
      "stage (the two copies drift apart)",
      "a tied model (gpt-small) with pp > 1", [](Ctx& x) {
        bypass(x, x.first(
                      [](const ir::Op& op) {
                        return result_starts(op, "grad.tied.") && op.kind == "allreduce";
                      },
                      "a tied-parameter gradient all-reduce"));
      });
  // Pairs each first-stage rank of a tied all-reduce's groups with the
  // last-stage rank of the next tp coordinate.
  auto shift_tied_groups = [](Ctx& x, bool last_stage_only) {
    const ir::Mesh& m = x.c.plan.mesh;
    auto ti = m.axis_index("tp");
    if (!ti || m.axes[*ti].size < 2) bad("'" + x.site.name + "' needs tp > 1");
    auto ats = x.find(
        [](const ir::Op& op) { return result_starts(op, "grad.tied.") && op.kind == "allreduce"; });
    if (ats.empty())
      bad("'" + x.site.name + "' needs a tied-parameter gradient all-reduce (gpt-small, pp > 1)");
    if (last_stage_only) ats.erase(ats.begin(), ats.end() - 1);
    for (Loc& at : ats)
      mutate(x, at, [&](ir::Op& o) {
        ir::Groups gs = std::get<ir::Groups>(o.attrs.at("groups"));
        for (auto& g : gs) {
          ir::Coord c = m.coord_of(g.back());
          c[*ti] = (c[*ti] + 1) % m.axes[*ti].size;
          g.back() = m.rank_of(c);
        }
        o.attrs["groups"] = gs;
      });
  };
  add("tied-wrong-group",
      "the tied embedding / LM head gradient is all-reduced over groups pairing each first-stage "
      "rank with the "
      "last-stage rank of the next tp coordinate (the embedding group built from the wrong ranks)",
      "a tied model (gpt-small) with pp > 1 and tp > 1",
      [shift_tied_groups](Ctx& x) { shift_tied_groups(x, false); });
  add(
      "tied-group-mismatch",
      "only the last stage builds the tied embedding's gradient group from the wrong ranks: the "
      "two stages' "
      "all-reduces name different groups (structural: no matching collective)",
      "a tied model (gpt-small) with pp > 1 and tp > 1",
      [shift_tied_groups](Ctx& x) { shift_tied_groups(x, true); }, 2,
      "which issues no collective over that group");
  add("early-grad-reduction",
      "the dp gradient reduction is launched before the last microbatch finished (at @mb, default M-2)",
      "dp > 1, mb > 1", [](Ctx& x) {
        int64_t m = dim_value(x.c, "M");
        if (m < 2) bad("'early-grad-reduction' needs --mb > 1");
        Loc red = x.first(dp_grad_allreduce(), "a dp gradient allreduce");
        const std::string p = red.op().results[0].substr(std::string("grad.reduced.").size());
        auto axes = axes_of(red.op());
        std::optional<int64_t> mb = x.site.mb;
        if (!mb) x.site.mb = m - 2;
        auto accs = x.find([&](const ir::Op& op) { return result_is(op, "grad.local." + p + ".next"); });
        if (accs.empty()) bad("'early-grad-reduction': no gradient accumulation for " + p);
        Loc acc = accs[0];
        ir::Op r = make("allreduce", {acc.op().results[0]}, {{"axes", strings(axes)}, {"reduce", "sum"}},
                        fresh(*acc.prog, "grad.early." + p));
        replace_value(x, acc, {r});
        x.site.mb.reset();
        // The reduction after the loop is gone (it already happened).
        red = x.first([&](const ir::Op& op) { return result_is(op, "grad.reduced." + p); }, "the reduction");
        bypass(x, red);
        x.site.mb = mb;
      });
  add("accumulator-reset", "a gradient accumulator is reset between microbatches (at @mb, default every one)",
      "mb > 1", [](Ctx& x) {
        // With one microbatch there is nothing to reset between: the bug would be a no-op.
        if (dim_value(x.c, "M") < 2) bad("'accumulator-reset' needs --mb > 1");
        Loc at = x.first([](const ir::Op& op) { return result_starts(op, "grad.local.") && result_ends(op, ".next"); },
                         "a gradient accumulation loop");
        bypass(x, at, 1);
      });
  add("wrong-pp-peer", "a pipeline stage sends its activation to the wrong peer ($pp+2)", "pp > 1",
      [](Ctx& x) {
        Loc at = x.first([](const ir::Op& op) { return op.kind == "send" && op.attr("peer"); }, "a pipeline send");
        at.op().attrs["peer"] = coords({{"pp", "$pp+2"}});
      },
      2, "outside the mesh");
  // Megatron's sequence-parallel gather has reduce-scatter as its adjoint;
  // taking the rank's own chunk of the gradient drops the other ranks' terms.
  add("sp-bwd-split",
      "the backward of a sequence-parallel allgather takes the rank's own chunk of the gradient "
      "instead of reduce-scattering it (a wrong adjoint)",
      "--sp", [](Ctx& x) {
        Loc at = x.first(
            [](const ir::Op& op) {
              return op.kind == "reduce_scatter" && axes_of(op) == ir::Strings{"tp"} &&
                     !op.operands.empty() && starts(op.operands[0], "d_");
            },
            "a backward reduce-scatter over tp");
        auto types = types_of(x.c.plan, *at.prog);
        int64_t dim = std::get<ir::DimExpr>(*at.op().attr("dim")).eval({});
        const auto& shape = types.at(at.op().results[0]).shape;
        if (dim < 0 || static_cast<size_t>(dim) >= shape.size())
          bad("'sp-bwd-split': reduce-scatter dim out of range");
        std::string size = shape[static_cast<size_t>(dim)].str();
        mutate(x, at, [&](ir::Op& o) {
          o = make("slice", {o.operands.at(0)},
                   {{"dim", dim}, {"offset", expr("$tp*(" + size + ")")}, {"size", expr(size)}},
                   o.results[0]);
        });
      });
  // Point-to-point messages are matched by (source, destination, tag): a
  // forward activation sent under the tag of another microbatch. A send in
  // the microbatch loop tagged `$mb` gets `M-1-$mb`; an unrolled schedule's
  // first two sends to one peer swap their tags.
  add("pp-tag-swap",
      "a pipeline stage sends microbatches' activations under each other's tags (1F1B: the next "
      "stage computes on the wrong microbatch; --schedule seq: a deadlock)",
      "pp > 1, mb > 1", [](Ctx& x) {
        if (dim_value(x.c, "M") < 2) bad("'pp-tag-swap' needs --mb > 1");
        auto sends = x.find([](const ir::Op& op) {
          return op.kind == "send" && op.attr("tag") && op.attr("peer");
        });
        auto tag = [](const Loc& l) { return std::get<ir::DimExpr>(*l.op().attr("tag")).str(); };
        for (const Loc& at : sends)
          if (tag(at) == "$mb") {
            at.op().attrs["tag"] = expr(std::to_string(dim_value(x.c, "M") - 1) + "-$mb");
            return;
          }
        for (size_t a = 0; a < sends.size(); ++a)
          for (size_t b = a + 1; b < sends.size(); ++b) {
            const Loc &la = sends[a], &lb = sends[b];
            if (la.g != lb.g || tag(la) == tag(lb) ||
                ir::attr_str(*la.op().attr("peer")) != ir::attr_str(*lb.op().attr("peer")))
              continue;
            std::swap(la.op().attrs["tag"], lb.op().attrs["tag"]);
            return;
          }
        bad("'pp-tag-swap' does not apply to this case: it needs two pipeline sends of different "
            "microbatches to one peer");
      });
  add("collective-order", "one rank issues two gradient allreduces in the opposite order", "dp > 1",
      [](Ctx& x) {
        auto red = x.find_layer(dp_grad_allreduce());
        for (size_t k = 0; k + 1 < red.size(); ++k) {
          Loc a = red[k], b = red[k + 1];
          if (a.g != b.g) continue;
          auto types = types_of(x.c.plan, *a.prog);
          const auto& ta = types.at(a.op().results[0]);
          const auto& tb = types.at(b.op().results[0]);
          if (ta.str() != tb.str() || axes_of(a.op()) != axes_of(b.op())) continue;
          // b's allreduce moves before a's: its operand is ready (grads come first).
          ir::Op ob = b.op();
          a.g->ops.erase(a.g->ops.begin() + static_cast<long>(b.i));
          a.g->ops.insert(a.g->ops.begin() + static_cast<long>(a.i), std::move(ob));
          return;
        }
        bad("'collective-order' needs two gradient allreduces of one shape");
      })
      ->default_rank = [](const ir::Plan&) { return std::optional<int64_t>(0); };

  // Pipeline schedules, ZeRO-3, balanced CP.
  add("1f1b-recv-first",
      "a 1F1B stage waits for its first output gradient before sending its first activation (warm-up "
      "skipped): the next stage waits for that activation, a deadlock",
      "pp > 1, --schedule 1f1b or interleaved", [](Ctx& x) {
        // The first backward receive that follows a send moves before that send.
        for (auto& p : x.c.plan.programs) {
          if (!x.progs.count(p.name)) continue;
          auto& ops = p.graph.ops;
          size_t first_send = ops.size();
          for (size_t i = 0; i < ops.size(); ++i) {
            if (ops[i].kind == "send" && first_send == ops.size()) first_send = i;
            if (ops[i].kind == "recv" && first_send < i && result_starts(ops[i], "d_")) {
              ir::Op r = ops[i];
              ops.erase(ops.begin() + static_cast<long>(i));
              ops.insert(ops.begin() + static_cast<long>(first_send), std::move(r));
              return;
            }
          }
        }
        bad("'1f1b-recv-first' needs an unrolled pipeline schedule (--schedule 1f1b) with pp > 1");
      },
      2, "deadlock");
  add("zero3-missing-regather",
      "ZeRO-3's backward uses the local parameter shard where it must all-gather the parameter again",
      "--zero 3", [](Ctx& x) {
        bypass(x, x.first([](const ir::Op& op) { return op.kind == "allgather" && result_starts(op, "regathered."); },
                          "a ZeRO-3 backward allgather"));
      },
      2, "shape rule violated");
  add("zero3-regather-offset",
      "ZeRO-3's backward re-gathers the parameter with every dp shard at the next rank's offset",
      "--zero 3, dp > 1", [](Ctx& x) {
        Loc at = x.first([](const ir::Op& op) { return op.kind == "allgather" && result_starts(op, "regathered."); },
                         "a ZeRO-3 backward allgather");
        const ir::Attr* d = at.op().attr("dim");
        const std::string dim = std::get<ir::DimExpr>(*d).str();
        auto types = types_of(x.c.plan, *at.prog);
        const std::string v = at.op().results[0];
        const std::string n = types.at(v).shape.at(std::stoul(dim)).str();
        std::string group;  // the gather's group size: dp, or dp*cp
        for (const auto& a : axes_of(at.op())) group += (group.empty() ? "" : "*") + a;
        const std::string shard = "(" + n + ")/(" + group + ")", rest = "(" + n + ")-" + shard;
        // Rotating by one shard: rank r's shard lands where rank r+1's belongs.
        std::string a = fresh(*at.prog, v + ".tail"), b = fresh(*at.prog, v + ".head"),
                    o = fresh(*at.prog, v + ".bug");
        replace_value(x, at,
                      {make("slice", {v}, {{"dim", expr(dim)}, {"offset", expr(shard)}, {"size", expr(rest)}}, a),
                       make("slice", {v}, {{"dim", expr(dim)}, {"offset", 0}, {"size", expr(shard)}}, b),
                       make("concat", {a, b}, {{"dim", expr(dim)}}, o)});
      });
  add("cp-balanced-chunk",
      "balanced CP masks each rank's second query chunk as chunk cp+i instead of 2cp-1-i",
      "--cp-balanced", [](Ctx& x) {
        mutate(x, x.first([](const ir::Op& op) {
          return op.kind == "softmax" && op.attr("q_offset") && result_ends(op, ".probs.h1");
        }, "a balanced context-parallel causal softmax"),
               [](ir::Op& o) { o.attrs["q_offset"] = ir::DimExpr::parse("(cp+$cp)*(S/(2*cp))"); });
      });

  // Offsets.
  add("wrong-vocab-offset", "the vocab-parallel embedding reads its shard at the reversed offset", "tp > 1",
      [](Ctx& x) {
        mutate(x, x.first([](const ir::Op& op) { return op.kind == "embedding" && op.attr("offset"); },
                          "a vocab-parallel embedding"),
               [](ir::Op& o) { o.attrs["offset"] = ir::DimExpr::parse("(tp-1-$tp)*(V/tp)"); });
      });
  add("zero-shard-offset", "ZeRO updates the wrong parameter shard (offset 0 on every dp rank)", "--zero 1 or 2",
      [](Ctx& x) {
        mutate(x, x.first([](const ir::Op& op) { return op.kind == "slice" && result_starts(op, "shard."); },
                          "a ZeRO parameter shard"),
               [](ir::Op& o) { o.attrs["offset"] = ir::DimExpr(int64_t{0}); });
      });
  add("cp-rope-offset", "under context parallelism every rank rotates with the first chunk's positions", "cp > 1",
      [](Ctx& x) {
        // Load-balanced chunks (--cp-balanced) concatenate two slices of
        // the table: each then reads the first chunk's positions.
        for (const std::string t : {"rope_cos.chunk", "rope_sin.chunk"}) {
          auto slices = x.find_layer([&](const ir::Op& op) {
            return op.kind == "slice" && (result_is(op, t) || result_is(op, t + "0") || result_is(op, t + "1"));
          });
          if (slices.empty()) x.first([&](const ir::Op& op) { return result_is(op, t); }, "a context-parallel RoPE table");
          for (const auto& at : slices) mutate(x, at, [](ir::Op& o) { o.attrs["offset"] = ir::DimExpr(int64_t{0}); });
        }
      });
  add("cp-causal-offset", "the causal mask ignores the query chunk's position under context parallelism", "cp > 1",
      [](Ctx& x) {
        mutate(x, x.first([](const ir::Op& op) { return op.kind == "softmax" && op.attr("q_offset"); },
                          "a context-parallel causal softmax"),
               [](ir::Op& o) { o.attrs.erase("q_offset"); });
      });
  add("wrong-expert", "token outputs are combined with the gate of the next expert (expert ids off by one)",
      "a MoE model", [](Ctx& x) {
        Loc at = x.first([](const ir::Op& op) {
          return result_ends(op, ".moe.expert_back") || result_ends(op, ".moe.e_out");
        }, "a MoE layer");
        // With ep the combine input arrives by all-to-all; without, it is the expert output.
        auto ends = x.find_layer([](const ir::Op& op) { return result_ends(op, ".moe.expert_back"); });
        if (!ends.empty()) at = ends[0];
        auto types = types_of(x.c.plan, *at.prog);
        const std::string v = at.op().results[0];
        const std::string e = std::to_string(types.at(v).shape[0].eval(x.c.plan.rank_bindings(0)));
        const std::string em1 = std::to_string(std::stoll(e) - 1);
        std::string a = fresh(*at.prog, v + ".rest"), b = fresh(*at.prog, v + ".first");
        std::string r = fresh(*at.prog, v + ".rotated");
        replace_value(x, at,
                      {make("slice", {v}, {{"dim", 0}, {"offset", 1}, {"size", expr(em1)}}, a),
                       make("slice", {v}, {{"dim", 0}, {"offset", 0}, {"size", 1}}, b),
                       make("concat", {a, b}, {{"dim", 0}}, r)});
      });

  // Constants and backward ops.
  add("constant-changed", "the attention scale constant differs (on @rank only, or on every rank)", "",
      [](Ctx& x) {
        mutate(x, x.first([](const ir::Op& op) { return op.kind == "scale" && result_ends(op, ".attn.scaled"); },
                          "an attention scale"),
               [](ir::Op& o) { o.attrs["factor"] = std::get<double>(o.attrs.at("factor")) * 1.25; });
      });
  add("pow-exponent", "the exponent of the squared gradient norm is 3 instead of 2", "--step clip or adamw",
      [](Ctx& x) {
        mutate(x, x.first([](const ir::Op& op) { return op.kind == "pow"; }, "a pow in the global norm"),
               [](ir::Op& o) { o.attrs["exponent"] = 3.0; });
      });
  add("bwd-wrong-input", "the SwiGLU backward differentiates silu at the up projection instead of the gate",
      "a SwiGLU model (llama, deepseek)", [](Ctx& x) {
        Loc at = x.first([](const ir::Op& op) { return op.kind == "silu_grad" && !op.operands.empty() &&
                                                        starts(op.operands[0], "l") && op.operands[0].find(".gate") != std::string::npos; },
                         "a SwiGLU backward");
        mutate(x, at, [](ir::Op& o) {
          std::string& g = o.operands[0];
          g = g.substr(0, g.rfind(".gate")) + ".up";
        });
      });
  add("rope-swap-bwd", "the backward of the query RoPE swaps the two outputs of every rotation pair",
      "a RoPE model (llama, deepseek)", [](Ctx& x) {
        Loc at = x.first([](const ir::Op& op) { return op.kind == "rope_grad" && result_starts(op, "d_") &&
                                                        op.results[0].find(".attn.q") != std::string::npos; },
                         "a RoPE backward");
        auto types = types_of(x.c.plan, *at.prog);
        const std::string v = at.op().results[0];
        auto t = types.at(v);
        std::vector<std::string> shape, pairs;
        for (const auto& d : t.shape) shape.push_back(d.str());
        pairs = shape;
        pairs.back() = "(" + shape.back() + ")/2";
        pairs.push_back("2");
        const std::string last = std::to_string(pairs.size() - 1);
        std::string r = fresh(*at.prog, v + ".pairs"), a = fresh(*at.prog, v + ".even"),
                    b = fresh(*at.prog, v + ".odd"), s = fresh(*at.prog, v + ".swapped"),
                    o = fresh(*at.prog, v + ".bug");
        replace_value(x, at,
                      {make("reshape", {v}, {{"shape", ints(pairs)}}, r),
                       make("slice", {r}, {{"dim", expr(last)}, {"offset", 0}, {"size", 1}}, a),
                       make("slice", {r}, {{"dim", expr(last)}, {"offset", 1}, {"size", 1}}, b),
                       make("concat", {b, a}, {{"dim", expr(last)}}, s),
                       make("reshape", {s}, {{"shape", ints(shape)}}, o)});
      });
  return v;
}

const std::vector<Bug>& registry() {
  static const std::vector<Bug> all = make_bugs();
  return all;
}

}  // namespace

const std::vector<BugInfo>& bugs() {
  static const std::vector<BugInfo> all = [] {
    std::vector<BugInfo> v;
    for (const auto& b : registry()) v.push_back(b.info);
    return v;
  }();
  return all;
}

const BugInfo* find_bug(const std::string& name) {
  for (const auto& b : bugs())
    if (b.name == name) return &b;
  return nullptr;
}

BugSite parse_bug(const std::string& text) {
  BugSite s;
  size_t at = text.find('@');
  s.name = text.substr(0, at);
  while (at != std::string::npos) {
    size_t next = text.find('@', at + 1);
    std::string part = text.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    size_t eq = part.find('=');
    if (eq == std::string::npos) bad("'" + part + "' in '" + text + "': expected rank=R, mb=M or layer=L");
    std::string k = part.substr(0, eq);
    int64_t v;
    try {
      v = std::stoll(part.substr(eq + 1));
    } catch (const std::exception&) {
      bad("'" + part + "' in '" + text + "': the value is not an integer");
    }
    if (k == "rank") s.rank = v;
    else if (k == "mb") s.mb = v;
    else if (k == "layer") s.layer = v;
    else bad("'" + k + "' in '" + text + "': expected rank, mb or layer");
    at = next;
  }
  return s;
}

void inject_bug(ir::Case& c, const std::string& text) {
  BugSite site = parse_bug(text);
  const Bug* bug = nullptr;
  for (const auto& b : registry())
    if (b.info.name == site.name) bug = &b;
  if (!bug) bad("unknown bug '" + site.name + "' (see `parity gen --list`)");
  Ctx x{c, site, {}};
  std::optional<int64_t> rank = site.rank;
  if (!rank && bug->default_rank) rank = bug->default_rank(c.plan);
  if (rank) {
    x.progs.insert(isolate_rank(c.plan, *rank));
  } else {
    for (const auto& p : c.plan.programs) x.progs.insert(p.name);
  }
  bug->apply(x);
  c.plan.name += " + bug " + text;
}

}  // namespace parity::corpus
