#include "verify/check.h"

#include <algorithm>
#include <cfenv>
#include <new>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "ir/interp.h"
#include "ir/num_domain.h"
#include "ir/validate.h"
#include "reduce/layer_fold.h"
#include "reduce/literal_readings.h"
#include "reduce/reduce.h"
#include "reduce/selection_floors.h"
#include "reduce/walk.h"
#include "verify/smt.h"
#include "verify/term.h"
#include "ir/id_ranges.h"
#include "verify/culprit.h"
#include "verify/inputs.h"
#include "verify/staged.h"
#include "verify/term_estimate.h"

namespace parity::verify {

const char* verdict_name(VerdictKind k) {
  switch (k) {
    case VerdictKind::verified: return "VERIFIED";
    case VerdictKind::mismatch: return "MISMATCH";
    case VerdictKind::unknown: return "UNKNOWN";
    case VerdictKind::invalid: return "INVALID";
  }
  return "?";
}

int verdict_exit_code(VerdictKind k) {
  switch (k) {
    case VerdictKind::verified: return 0;
    case VerdictKind::mismatch: return 1;
    case VerdictKind::invalid: return 2;
    case VerdictKind::unknown: return 3;
  }
  return 3;
}

namespace {

using ir::Tensor;

// Instructions the plan unrolls to over all its ranks, counted until the
// count passes `cap` (a plan of millions of ranks stops early).
size_t rank_instructions_upto(const ir::Case& c, const ir::Bindings& base, size_t cap) {
  std::map<std::string, size_t> len;
  for (const auto& prog : c.plan.programs) len[prog.name] = ir::flat_size(prog.graph, base, cap);
  size_t total = 0;
  for (int64_t r = 0; r < c.plan.mesh.num_ranks() && total <= cap; ++r)
    if (const ir::Program* prog = c.plan.program_of(r)) total += len[prog->name];
  return total;
}

Verdict invalid_verdict(const ir::DiagList& d) {
  Verdict v;
  v.kind = VerdictKind::invalid;
  v.diags = d.items;
  v.reason = d.items[0].str();
  return v;
}


std::string idx_str(const std::vector<int64_t>& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? "," : "") + std::to_string(idx[i]);
  return s + "]";
}

// Concrete values differ beyond floating-point noise.
bool differs(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return false;  // inconclusive at this point
  return std::fabs(a - b) > 1e-6 * (1.0 + std::fabs(a) + std::fabs(b));
}

// The plan is undefined (NaN or infinite) where the spec is finite: the
// spec's real value exists and the plan's does not, so they differ there. It
// is asked of the double and the extended-precision run alike, so an
// overflow that only double suffers (a value past 1.8e308 but under
// extended precision's 1.2e4932) is never taken for it. A NaN spec stays
// inconclusive: the step is not defined at that point at all.
bool undefined_in_plan(long double s, long double p) { return std::isfinite(s) && !std::isfinite(p); }

// A divergence at a point, as one run sees it: a difference over the
// tolerance, or a plan undefined where the spec is not.
// At the scaled screening points only a difference of finite values counts:
// an input scaled by 256 overflows `exp` (and by 1/256 underflows a sum of
// them to 0) even in extended precision, where the real value is finite. A
// log-sum-exp written without its max shift is exact over the reals.
bool diverges_finite(long double s, long double p) {
  return std::isfinite(s) && std::isfinite(p) && differs(static_cast<double>(s), static_cast<double>(p));
}

bool diverges(long double s, long double p) {
  return differs(static_cast<double>(s), static_cast<double>(p)) || undefined_in_plan(s, p);
}

// `differs` has a tolerance of 1e-6 (relative, with an absolute floor) and so
// misses small differences: a gradient norm that counts one squared gradient
// twice moves by 5e-8. Such a difference still counts when it is stable: far
// above the double run's rounding error (estimated by its distance from the
// extended-precision run of the same point), far above extended precision's
// own relative error, and above 1e-12 in absolute terms: a term absorbed by
// rounding in both precisions alike ((1e-20 + 1) - 1 is 0 in both) leaves a
// difference the two runs cannot see, but only below 1e-19 times the values
// it was added to, which are of order one at the screening points.
bool differs_stably(double sd, double pd, long double sl, long double pl) {
  if (!std::isfinite(sd) || !std::isfinite(pd) || !std::isfinite(sl) || !std::isfinite(pl)) return false;
  const long double diff = std::fabs(sl - pl);
  const long double noise = std::fabs(static_cast<long double>(sd) - sl) + std::fabs(static_cast<long double>(pd) - pl);
  const long double mag = std::fabs(sl) + std::fabs(pl);
  return diff > 1e-12L * mag && diff > 1e3L * noise && diff > 1e-12L &&
         std::fabs(sd - pd) > 1e-12 * (std::fabs(sd) + std::fabs(pd));
}

// One recorded instance of a placed plan value on one rank (one loop iteration).
template <class S>
struct Instance {
  size_t placement;
  int64_t rank;
  std::string iter;
  std::shared_ptr<const ir::Bindings> b;  // rank bindings + loop indices, shared by the iteration's instances
  const ir::Op* def;  // the op that defined the value; nullptr for a loop result or a program input
  bool loop_result;
  size_t seq;  // logical time (PlanRunner::clock): orders instances so the first failure is the earliest
  Tensor<S> value;

  // Names the defining op in a counterexample (written only for one).
  std::string op() const { return def ? def->label() : loop_result ? "loop result" : "program input"; }
};

struct Setup {
  const ir::Case& c;
  ir::Bindings dims;  // spec dims (plan dims agree)
  std::map<std::string, std::vector<int64_t>> spec_shapes;
  // program -> value -> placements (looked up for every value every rank defines)
  std::unordered_map<std::string, std::unordered_map<std::string, std::vector<size_t>>> placements_of;

  const std::vector<size_t>* placements(const std::string& program, const std::string& value) const {
    auto p = placements_of.find(program);
    if (p == placements_of.end()) return nullptr;
    auto v = p->second.find(value);
    return v == p->second.end() ? nullptr : &v->second;
  }
};

// One obligation group to look at alone: the instances that sum to the value
// the staged prover found different (one instance for a region placement).
// A run with a focus records only them and stops once all are defined.
struct Focus {
  const StageFailure* hint;
  std::vector<char> eligible;  // per placement: may hold a member of the group
  std::vector<size_t> axes;    // mesh axes the group sums over, by index
  ir::Coord masked;            // the hint rank's coordinate, -1 on those axes
  size_t expected = 1;         // the group's members: one per rank along the axes
};

// The region offsets of instance `in` (part of its group's key).
template <class S>
std::vector<int64_t> region_offsets(const ir::Plan& p, const Instance<S>& in) {
  std::vector<int64_t> off;
  for (const auto& d : p.placements[in.placement].region) off.push_back(d.offset.eval(*in.b));
  return off;
}

// Every member of the focus group is among `got`: the hint's own instance and
// as many instances at its offsets as the group has ranks. Each rank
// contributes at most one (see focus_on).
template <class S>
bool group_complete(const ir::Plan& p, const Focus& f, const std::vector<Instance<S>>& got) {
  const Instance<S>* own = nullptr;
  for (const auto& in : got)
    if (in.placement == f.hint->placement && in.rank == f.hint->rank) own = &in;
  if (!own) return false;
  const auto off = region_offsets(p, *own);
  size_t n = 0;
  for (const auto& in : got) n += region_offsets(p, in) == off;
  return n == f.expected;
}

// `focus`: record only that group and stop the run once it is complete.
// `max_bytes`: what the run may hold (its values and the instances kept).
template <class S, class D>
std::vector<Instance<S>> run_plan(const Setup& st, D& dom, const std::map<std::string, Tensor<S>>& spec_inputs,
                                  const Focus* focus = nullptr, size_t max_bytes = SIZE_MAX) {
  const ir::Plan& p = st.c.plan;
  std::vector<Instance<S>> out;
  ir::PlanRunner<D> runner(p, dom);
  runner.limit_bytes(max_bytes);
  // The bindings of each (rank, iteration) that defines a placed value, built
  // once: the runner switches ranks at every message and collective.
  std::vector<std::unordered_map<std::string, std::shared_ptr<const ir::Bindings>>> iter_b(
      static_cast<size_t>(p.mesh.num_ranks()));
  runner.run(
      [&](int64_t rank, const ir::Program& prog, const std::string& name) -> Tensor<S> {
        const std::vector<size_t>* placed = st.placements(prog.name, name);
        if (!placed)
          throw ir::InvalidInput(ir::Diag{"", prog.name, "", p.mesh.rank_str(rank), "input '" + name + "' has no placement"});
        for (size_t idx : *placed) {
          const ir::Placement& pl = p.placements[idx];
          if (pl.kind != ir::PlacementKind::region) continue;
          ir::Bindings b = p.rank_bindings(rank);
          for (const auto& [k, v] : st.dims) b.emplace(k, v);
          ir::Box box = ir::placement_box(pl, b, st.spec_shapes.at(pl.spec_value));
          auto si = spec_inputs.find(pl.spec_value);
          if (si == spec_inputs.end())
            throw ir::InvalidInput(ir::Diag{"", prog.name, "", p.mesh.rank_str(rank),
                                            "input '" + name + "' is placed on spec value '" + pl.spec_value + "', which is not a spec input"});
          return extract(si->second, box);
        }
        throw ir::InvalidInput(ir::Diag{"", prog.name, "", p.mesh.rank_str(rank),
                                        "input '" + name + "' has only partial placements; inputs need a region placement"});
      },
      [&](int64_t rank, const ir::Program& prog, const std::string& name, const ir::Instr& ins, const Tensor<S>& v) {
        const std::vector<size_t>* placed = st.placements(prog.name, name);
        if (!placed) return;
        if (focus) {
          if (ins.iter != focus->hint->iter) return;
          ir::Coord c = p.mesh.coord_of(rank);
          for (size_t a : focus->axes) c[a] = -1;
          if (c != focus->masked) return;
        }
        auto& b = iter_b[static_cast<size_t>(rank)][ins.iter];
        if (!b) {
          ir::Bindings nb = p.rank_bindings(rank);
          for (const auto& [k, x] : st.dims) nb.emplace(k, x);
          for (const auto& [k, x] : ins.loop()) nb[k] = x;
          b = std::make_shared<const ir::Bindings>(std::move(nb));
        }
        for (size_t idx : *placed)
          if (!focus || focus->eligible[idx]) {
            runner.charge(runner.bytes_of(v) + sizeof(Instance<S>));
            out.push_back(Instance<S>{idx, rank, ins.iter, b, ins.op, ins.kind == ir::Instr::bind, runner.clock(), v});
          }
        if (focus && group_complete(p, *focus, out)) runner.stop();
      });
  // Earliest logical time first, then rank: deterministic and causal, also
  // across programs (a value received from another stage comes after the
  // values its sender computed first).
  std::stable_sort(out.begin(), out.end(), [](const Instance<S>& a, const Instance<S>& b) {
    return a.seq != b.seq ? a.seq < b.seq : a.rank < b.rank;
  });
  return out;
}

// An obligation: spec element == plan element (a sum over ranks for partials).
struct Obl {
  size_t instance;  // first instance of its group (for location)
  std::vector<size_t> members;
  size_t placement;
  int64_t elem;  // flat index in the plan value
  std::vector<int64_t> spec_index;
  TermId spec_t, plan_t;
};

class Checker {
 public:
  // `numeric_first`: before building symbolic terms for a large plan, run it
  // numerically at the screening points; a divergence re-checked in extended
  // precision is a counterexample without the (memory-hungry) symbolic run.
  // `hint`: where the staged prover found terms that differ; the numeric
  // search looks there first.
  Checker(const ir::Case& c, const std::string& file, const VerifyOptions& opt, bool validated = false,
          bool numeric_first = false, const StageFailure* hint = nullptr)
      : c_(c), file_(file), opt_(opt), validated_(validated), numeric_first_(numeric_first), hint_(hint) {}

  // Only the concrete run at the screening points: a MISMATCH it confirms,
  // or UNKNOWN (no symbolic check follows).
  Verdict refute_only() {
    numeric_only_ = true;
    return run();
  }
  // After refute_only: whether the plan was run at all (not too large).
  bool ran_numeric() const { return numeric_ran_; }
  // Called when screening found no difference and some obligation still needs
  // expansion or a solver; a verdict it returns is final.
  void before_proving(std::function<std::optional<Verdict>()> f) { before_proving_ = std::move(f); }

  Verdict run() {
    progress_start(opt_.progress, "building the whole plan's terms");
    auto t0 = std::chrono::steady_clock::now();
    Verdict v = run_inner();
    v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    v.solver = opt_.solver;
    return v;
  }

 private:
  Verdict invalid(const std::string& msg) {
    Verdict v;
    v.kind = VerdictKind::invalid;
    v.diags.push_back(ir::Diag{file_, "", "", "", msg});
    v.reason = msg;
    return v;
  }

  Verdict run_inner() {
    ir::DiagList d = validated_ ? ir::DiagList{} : ir::validate_case(c_, file_);
    if (!d.empty()) {
      return invalid_verdict(d);
    }
    if (!c_.spec) return invalid("verify needs a spec: give CASE with a spec, or SPEC PLAN");
    if (c_.plan.programs.empty()) return invalid("verify needs a plan");
    const ir::Spec& spec = *c_.spec;
    for (const auto& [k, val] : c_.plan.dims)
      if (auto it = spec.dims.find(k); it != spec.dims.end() && it->second != val)
        return invalid("dim " + k + " is " + std::to_string(it->second) + " in the spec but " + std::to_string(val) + " in the plan");

    Setup st{c_, spec.dims, {}, {}};
    for (const auto& [k, val] : c_.plan.dims) st.dims.emplace(k, val);
    ir::DiagList sd;
    ir::TypeMap stypes;
    ir::validate_spec(spec, file_, sd, &stypes);
    for (const auto& [name, t] : stypes) st.spec_shapes[name] = ir::concrete_shape(t, st.dims);
    for (size_t i = 0; i < c_.plan.placements.size(); ++i)
      st.placements_of[c_.plan.placements[i].program][c_.plan.placements[i].value].push_back(i);

    // Spec inputs as variables.
    ir::NegativeIds negative;
    auto ranges = ir::id_ranges(spec, stypes, st.dims, &negative);
    TermTable tt;
    TermDomain td{tt};
    std::map<std::string, Tensor<TermId>> sym_in;
    for (const auto& in : spec.graph.inputs) {
      const ir::TensorType& ty = stypes.at(in);
      Tensor<TermId> t;
      t.shape = st.spec_shapes.at(in);
      for (int64_t i = 0; i < ir::sem::num_el(t.shape); ++i) {
        std::string nm = in + (t.shape.empty() ? "" : idx_str(t.index_of(i)));
        if (ty.dtype == ir::DType::i64)
          t.data.push_back(tt.int_var(nm, 0, ranges.count(in) ? std::max<int64_t>(ranges[in], 1) : 16,
                                      negative.count(in) ? negative[in] : std::vector<int64_t>{}));
        else if (ty.dtype == ir::DType::i1) t.data.push_back(tt.bool_var(nm));
        else t.data.push_back(tt.var(nm));
      }
      sym_in[in] = std::move(t);
    }
    nvars_ = tt.vars().size();
    for (const auto& [name, role] : spec.roles)
      if (role == ir::Role::opt_state) is_state_.insert(name);

    // Concrete screening points.
    std::mt19937_64 rng(opt_.seed);
    std::vector<std::vector<double>> points;
    for (int k = 0; k < opt_.random_points; ++k) points.push_back(random_point(tt, rng, k == 0, k == 1));
    // And one with each mask's first element on and the rest off: a count
    // of tokens is zero on every rank or chunk without that element, where
    // a plan that divides by its local count is not finite and the spec's
    // global mean is (a context-parallel rank whose chunk is all padding:
    // context-parallel/cp_bug_loss_rank_mean_nan_on_empty_chunk_large).
    if (opt_.random_points > 0 && std::any_of(tt.vars().begin(), tt.vars().end(), [](const VarInfo& x) {
          return x.boolean || !x.extra.empty();
        })) {
      std::mt19937_64 sparse_rng(opt_.seed ^ 0x5bd1e995ULL);
      std::vector<double> p = random_point(tt, sparse_rng, false, false);
      // Ids with a negative id the spec tests for (an ignore_index of -100)
      // likewise: the first valid, the rest ignored.
      for (size_t k = 0; k < tt.vars().size(); ++k) {
        const VarInfo& vi = tt.vars()[k];
        if (vi.boolean) p[k] = first_element(vi.name) ? 1.0 : 0.0;
        else if (vi.integer && !vi.extra.empty())
          p[k] = first_element(vi.name)
                     ? static_cast<double>(std::uniform_int_distribution<int64_t>(vi.lo, vi.hi - 1)(sparse_rng))
                     : static_cast<double>(vi.extra[0]);
      }
      points.push_back(std::move(p));
    }
    // And two with every id of an input the same but its first, or its last,
    // element: a block of a packed sequence then holds no token of some
    // row's document, where a plan that normalizes each block by its own
    // masked sum is not finite and the spec's one sum over the row is
    // (loss/packed_bug_docmask_ring_block_nan_no_shared_doc).
    std::mt19937_64 id_rng(opt_.seed ^ 0x2545f4914f6cdd1dULL);
    if (opt_.random_points > 0)
      for (bool last : {false, true}) {
        std::vector<double> p = random_point(tt, id_rng, true, false);
        bool any = false;
        for (const auto& in : spec.graph.inputs) {
          const Tensor<TermId>& t = sym_in.at(in);
          if (t.data.empty() || tt.node(t.data[0]).kind != TK::IntVar) continue;
          for (TermId x : t.data) {
            const auto k = static_cast<size_t>(tt.node(x).aux);
            const VarInfo& vi = tt.vars()[k];
            if (vi.boolean || vi.hi - vi.lo < 2) continue;
            p[k] = static_cast<double>(vi.lo);
            if (x == (last ? t.data.back() : t.data.front())) p[k] = static_cast<double>(vi.lo + 1);
            any = true;
          }
        }
        if (any) points.push_back(std::move(p));
      }

    // A concrete run of the whole plan, made at most once: a MISMATCH it
    // finds is final; otherwise the symbolic check decides.
    bool tried_numeric = false;
    size_t rank_instructions = 0;  // set by the size guard below
    auto try_numeric = [&]() -> std::optional<Verdict> {
      if (tried_numeric) return std::nullopt;
      tried_numeric = true;
      // A run keeps every value of every rank: about kRunBytesPerInstruction
      // bytes a rank-instruction (measured on generated plans at reduced
      // dims), and two runs go side by side.
      if (const size_t need = 2 * rank_instructions * kRunBytesPerInstruction; need > 2 * run_budget()) {
        numeric_note_ = "a numeric run would need about " + std::to_string(need >> 30) + " GiB (" +
                        std::to_string(rank_instructions) + " rank-instructions), more than " +
                        std::to_string((2 * run_budget()) >> 30) + " GiB allowed";
        return std::nullopt;
      }
      // The spec runs unbudgeted and every tensor is held: its elements (a
      // matmul's once per contracted index, as the term estimate counts them)
      // bound the time and memory too (attention scores of a sequence of
      // 131072 are 17 billion).
      {
        ir::Bindings b = st.dims;
        for (const auto& a : c_.plan.mesh.axes) b[a.name] = a.size;
        const size_t cap = run_budget() / sizeof(double);
        if (symbolic_terms_upto(c_, b, cap, /*ranks=*/false) > cap) {
          numeric_note_ = "a numeric run would evaluate more than " + std::to_string(cap) +
                          " elements (tensors too large to run as they are)";
          return std::nullopt;
        }
      }
      progress_start(opt_.progress, "evaluating the plan numerically");
      try {
        auto found = refute_numerically(st, tt, sym_in, points);
        numeric_ran_ = true;
        return found;
      } catch (const ir::OutOfBudget& e) {
        numeric_note_ = std::string("a numeric run gave up: ") + e.what();
        return std::nullopt;
      } catch (const ir::EvalError&) {  // the symbolic run reports it
        return std::nullopt;
      }
    };

    // Size guard: every rank is run unless a reduction applies.
    {
      ir::Bindings base = st.dims;
      for (const auto& a : c_.plan.mesh.axes) base[a.name] = a.size;
      const size_t total = rank_instructions_upto(c_, base, 4 * opt_.max_rank_instructions);
      rank_instructions = total;
      // A numeric run costs far less per instruction than a symbolic one, so
      // it may look for a counterexample in plans too large for the symbolic check.
      if (numeric_only_) {
        if (total / 4 <= opt_.max_rank_instructions)
          if (auto v = try_numeric()) return *v;
        Verdict v;
        v.kind = VerdictKind::unknown;
        v.reason = total / 4 > opt_.max_rank_instructions ? "too large to run numerically"
                   : !numeric_note_.empty()                 ? numeric_note_
                                                            : "no difference at the numeric points";
        return v;
      }
      if (numeric_first_ && total > opt_.numeric_first_above && total / 4 <= opt_.max_rank_instructions)
        if (auto v = try_numeric()) return *v;
      if (total > opt_.max_rank_instructions) {
        Verdict v;
        v.kind = VerdictKind::unknown;
        v.reason = "the plan unrolls to more than " + std::to_string(opt_.max_rank_instructions) +
                   " rank-instructions after reduction (see the reduction notes for what could not be reduced)" +
                   (numeric_note_.empty() ? std::string() : "; " + numeric_note_);
        return v;
      }
      if (size_t terms = symbolic_terms_upto(c_, base, opt_.max_terms); terms > opt_.max_terms) {
        if (auto v = try_numeric()) return *v;
        Verdict v;
        v.kind = VerdictKind::unknown;
        v.reason = "the symbolic check would build more than " + std::to_string(opt_.max_terms) +
                   " terms (tensors too large after reduction: see the reduction notes for what could not be "
                   "reduced); " + (numeric_note_.empty() ? "no difference at the numeric points" : numeric_note_);
        return v;
      }
    }

    // Symbolic runs.
    std::map<std::string, Tensor<TermId>> sym_spec;
    std::vector<Instance<TermId>> sym_inst;
    // No symbolic terms, but a concrete run can still refute the plan.
    auto without_terms = [&](const std::string& why) {
      if (auto v = try_numeric()) return *v;
      Verdict v;
      v.kind = VerdictKind::unknown;
      v.reason = why + "; no difference at the " + std::to_string(points.size()) + " numeric points";
      return v;
    };
    try {
      sym_spec = ir::run_graph(td, spec.graph, st.dims, sym_in);
      sym_inst = run_plan<TermId>(st, td, sym_in);
    } catch (const NotSmall& e) {
      return without_terms(e.what());
    } catch (const NonFinite& e) {
      return without_terms(std::string(e.what()) + " in the spec or the plan");
    } catch (const ir::EvalError& e) {
      return invalid(std::string("plan cannot run: ") + e.what());
    }

    // Obligations.
    std::vector<Obl> obls = build_obligations(st, sym_inst, sym_spec, tt);
    if (!coverage_error_.empty()) {
      Verdict v = invalid(coverage_error_);
      v.uncovered = coverage_value_;
      return v;
    }

    // Numeric runs at each point: the same obligations, concretely.
    std::vector<std::vector<std::pair<double, double>>> num;  // [point][obligation] -> (spec, plan)
    for (const auto& pt : points) num.push_back(eval_numeric<double>(st, tt, sym_in, pt, obls));
    num_long_.clear();
    wide_made_ = false;
    wide_points_.clear();
    num_wide_.clear();

    Verdict v;
    v.obligations = obls.size();
    std::map<size_t, PlacementStats> stats;
    std::map<std::pair<TermId, TermId>, int> cache;  // 0 proved, 1 failed, 2 unknown
    std::vector<std::unique_ptr<SmtBackend>> solvers;
    if (opt_.solver == "z3" || opt_.solver == "both") solvers.push_back(make_z3());
    if (opt_.solver == "cvc5" || opt_.solver == "both") solvers.push_back(make_cvc5());
    if (solvers.empty()) return invalid("unknown solver '" + opt_.solver + "' (z3, cvc5, both)");

    progress_start(opt_.progress, "checking obligations", obls.size());
    // Screening first, over every obligation: a numeric difference anywhere
    // is shown before expansion or a solver spends time on the others.
    for (size_t i = 0; i < obls.size() && !opt_.smt_all; ++i) {
      const Obl& o = obls[i];
      if (o.spec_t == o.plan_t) continue;
      Verdict probe;
      if (decide(probe, tt, st, sym_in, obls, num, points, i, solvers, false) != 1) continue;
      v.cex = probe.cex;
      cache[std::make_pair(o.spec_t, o.plan_t)] = 1;
      ++v.unique;
      break;
    }
    if (!v.cex && !opt_.smt_all && before_proving_ &&
        std::any_of(obls.begin(), obls.end(), [](const Obl& o) { return o.spec_t != o.plan_t; }))
      if (auto w = before_proving_()) return *w;
    size_t over_time = 0;
    for (size_t i = 0; i < obls.size(); ++i) {
      progress_step(opt_.progress);
      const Obl& o = obls[i];
      PlacementStats& ps = stats[o.placement];
      ++ps.obligations;
      auto key = std::make_pair(o.spec_t, o.plan_t);
      int status;
      if (auto it = cache.find(key); it != cache.end()) {
        status = it->second;
      } else if (o.spec_t != o.plan_t && !v.cex && out_of_time()) {
        // Past the time limit: still screened, no longer proved.
        ++v.unique;
        status = decide(v, tt, st, sym_in, obls, num, points, i, solvers, false);
        cache[key] = status;
        if (status == 2) ++over_time;
      } else {
        ++v.unique;
        status = decide(v, tt, st, sym_in, obls, num, points, i, solvers);
        cache[key] = status;
      }
      if (status == 0) ++ps.proved;
      else if (status == 1) ++ps.failed, ++v.failed;
      else if (status == 2) ++ps.unknown, ++v.unknown;
    }
    for (auto& [idx, s] : stats) {
      const ir::Placement& pl = c_.plan.placements[idx];
      s.label = pl.program + "." + pl.value + " -> " + pl.spec_value;
      v.placements.push_back(s);
    }
    if (v.failed) v.kind = VerdictKind::mismatch;
    else if (v.unknown) v.kind = VerdictKind::unknown;
    else v.kind = VerdictKind::verified;
    if (v.kind == VerdictKind::mismatch && !v.cex) {
      v.kind = VerdictKind::unknown;  // never show a mismatch we could not reproduce
      v.reason = "a refutation could not be reproduced concretely";
    }
    if (over_time)
      unknown_reason_ = fmt::format("the time limit (--time-limit {} s) ran out with {} obligations not decided",
                                    opt_.time_limit_s, over_time);
    if (v.kind == VerdictKind::unknown && v.reason.empty()) v.reason = unknown_reason_;
    return v;
  }

  // Seconds left of --time-limit (infinite without one).
  double seconds_left() const {
    if (opt_.time_limit_s <= 0) return std::numeric_limits<double>::infinity();
    return opt_.time_limit_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  bool out_of_time() const { return seconds_left() < 0; }
  // The solver's limit: its own, or what is left of the whole check's.
  unsigned solver_timeout_ms() const {
    return static_cast<unsigned>(std::clamp(seconds_left() * 1000.0, 1.0, static_cast<double>(opt_.timeout_ms)));
  }

  // The first point keeps every mask on: a random mask can hide exactly the
  // tokens whose gradient a bug changes.
  // `state_zero`: optimizer state at zero, as at the first step of training.
  // Adam's eps and its step-1 bias correction weigh most there (the update is
  // m / (sqrt(v) + eps) with v of the size of g^2): an eps changed by 0.1%,
  // moved inside the sqrt or dropped is invisible next to a second moment of
  // order one and plain at zero.
  // Whether an input variable's name (`mask[0,0]`, `s3.mask#0`) is the first
  // element of its tensor.
  static bool first_element(const std::string& name) {
    if (auto h = name.rfind('#'); h != std::string::npos) return name.substr(h + 1) == "0";
    auto b = name.rfind('[');
    if (b == std::string::npos) return true;
    for (size_t k = b + 1; k + 1 < name.size(); ++k)
      if (name[k] != '0' && name[k] != ',') return false;
    return true;
  }

  std::vector<double> random_point(const TermTable& tt, std::mt19937_64& rng, bool masks_on, bool state_zero) {
    std::vector<double> p;
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (const auto& vi : tt.vars()) {
      if (vi.boolean && masks_on) p.push_back(1.0);
      else if (vi.integer && vi.extra.empty()) p.push_back(static_cast<double>(std::uniform_int_distribution<int64_t>(vi.lo, vi.hi - 1)(rng)));
      else if (vi.integer) p.push_back(static_cast<double>(ir::draw_id(vi.lo, vi.hi, vi.extra, rng)));
      else p.push_back(u(rng));
    }
    // Optimizer second moments must be nonnegative for sqrt: inputs named as
    // optimizer state get |x|.
    for (size_t k = 0; k < tt.vars().size(); ++k)
      if (is_state_.count(tt.vars()[k].name.substr(0, tt.vars()[k].name.find('[')))) p[k] = state_zero ? 0.0 : std::fabs(p[k]);
    return p;
  }

  // The placed instances grouped into obligations, in execution order: a
  // region placement alone, the members of a partial sum together.
  template <class S>
  std::vector<std::vector<size_t>> group_instances(const std::vector<Instance<S>>& inst) const {
    const ir::Plan& p = c_.plan;
    // Partial placements: group the instances that sum together.
    // Keyed by what is summed, not by placement: in a per-rank (MPMD) plan the
    // members of one partial sum are placed by different programs.
    // The region is part of the key: one rank may place two partial sums on
    // two regions of one spec value (balanced context-parallel chunks).
    // And which of a program's partial placements of that region it is
    // (ir::partial_ordinals): two values placed as partials of one region
    // are two sums.
    // The box's sizes too: two partial sums over one axis may start at one
    // offset and cover boxes of different sizes (a [6,6] one and a [6,3] one).
    using PartialKey = std::tuple<std::string, std::vector<std::string>, std::string, std::vector<int64_t>,
                                  std::vector<int64_t>, uint32_t, std::vector<int64_t>>;
    const std::vector<uint32_t> ordinal = ir::partial_ordinals(p);
    std::map<PartialKey, std::vector<size_t>> partial_groups;
    auto key_of = [&](size_t i) {
      const ir::Placement& pl = p.placements[inst[i].placement];
      ir::Coord c = p.mesh.coord_of(inst[i].rank);
      for (const auto& a : pl.axes) c[*p.mesh.axis_index(a)] = -1;
      std::vector<std::string> axes = pl.axes;
      std::sort(axes.begin(), axes.end());
      std::vector<int64_t> off, size;
      for (const auto& d : pl.region) {
        off.push_back(d.offset.eval(*inst[i].b));
        size.push_back(d.size.eval(*inst[i].b));
      }
      return PartialKey{pl.spec_value, axes, inst[i].iter, c, off, ordinal[inst[i].placement], size};
    };
    for (size_t i = 0; i < inst.size(); ++i) {
      const ir::Placement& pl = p.placements[inst[i].placement];
      if (pl.kind == ir::PlacementKind::region) continue;
      partial_groups[key_of(i)].push_back(i);
    }
    // Obligations in execution order: the first failure is the earliest divergence.
    std::vector<std::vector<size_t>> ordered;
    std::map<PartialKey, bool> emitted;
    for (size_t i = 0; i < inst.size(); ++i) {
      const ir::Placement& pl = p.placements[inst[i].placement];
      if (pl.kind == ir::PlacementKind::region) {
        ordered.push_back({i});
        continue;
      }
      auto key = key_of(i);
      if (emitted[key]) continue;
      emitted[key] = true;
      ordered.push_back(partial_groups[key]);
    }
    return ordered;
  }

  // Numeric run of spec and plan at `pt` (inputs ordered as the variables of `tt`).
  template <class F>
  std::pair<std::map<std::string, Tensor<F>>, std::vector<Instance<F>>> run_numeric(
      const Setup& st, const TermTable& tt, const std::map<std::string, Tensor<TermId>>& sym_in,
      const std::vector<double>& pt, const Focus* focus = nullptr) {
    ir::NumDomain<F> nd;
    std::map<std::string, Tensor<F>> in;
    for (const auto& [name, t] : sym_in) {
      Tensor<F> x;
      x.shape = t.shape;
      for (TermId id : t.data) x.data.push_back(static_cast<F>(pt[static_cast<size_t>(tt.node(id).aux)]));
      in[name] = std::move(x);
    }
    auto spec_env = ir::run_graph(nd, c_.spec->graph, st.dims, in);
    auto inst = run_plan<F>(st, nd, in, focus, run_budget());
    return {std::move(spec_env), std::move(inst)};
  }

  // Bytes one numeric run may hold, as counted by the runner (its values and
  // the instances kept, without allocator overhead: the process holds about
  // 1.7 times that).
  size_t run_budget() const {
    if (opt_.numeric_run_bytes) return opt_.numeric_run_bytes;
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return size_t{2} << 30;
    return static_cast<size_t>(pages) * static_cast<size_t>(page) / 6;
  }
  static constexpr size_t kRunBytesPerInstruction = 400;

  // The hint's obligation group as a focus, when a run can tell that it is
  // complete before the end: a region placement is a group on its own; a
  // partial one sums over one rank per coordinate along its axes, provided no
  // program has a second partial placement that could join the same sum (a
  // value is defined once per rank and iteration, so each rank then adds at
  // most one member).
  std::optional<Focus> focus_on() const {
    if (!hint_ || !opt_.numeric_focus) return std::nullopt;
    const ir::Plan& p = c_.plan;
    const ir::Placement& hp = p.placements[hint_->placement];
    Focus f;
    f.hint = hint_;
    f.eligible.assign(p.placements.size(), 0);
    f.masked = p.mesh.coord_of(hint_->rank);
    if (hp.kind == ir::PlacementKind::region) {
      f.eligible[hint_->placement] = 1;
      return f;
    }
    auto sorted = [](std::vector<std::string> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    const auto axes = sorted(hp.axes);
    std::map<std::string, int> per_program;
    for (size_t i = 0; i < p.placements.size(); ++i) {
      const ir::Placement& pl = p.placements[i];
      if (pl.kind == ir::PlacementKind::region || pl.spec_value != hp.spec_value || sorted(pl.axes) != axes) continue;
      if (++per_program[pl.program] > 1) return std::nullopt;
      f.eligible[i] = 1;
    }
    for (const auto& a : axes) {
      size_t i = *p.mesh.axis_index(a);
      f.axes.push_back(i);
      f.masked[i] = -1;
      f.expected *= static_cast<size_t>(p.mesh.axes[i].size);
    }
    return f;
  }

  // The first placed element (in execution order) whose spec and plan values
  // differ at a screening point, confirmed in extended precision; nullopt when
  // none differs (the symbolic check then decides).
  std::optional<Verdict> refute_numerically(const Setup& st, const TermTable& tt,
                                            const std::map<std::string, Tensor<TermId>>& sym_in,
                                            const std::vector<std::vector<double>>& points) {
    const ir::Plan& p = c_.plan;
    // Obligation group `gi` of a run: its spec tensor and region offsets,
    // looked up once per group rather than per element.
    auto view = [&](const auto& run, const std::vector<std::vector<size_t>>& groups, size_t gi) {
      const auto& [spec_env, inst] = run;
      const auto& first = inst[groups[gi][0]];
      const ir::Placement& pl = p.placements[first.placement];
      std::vector<int64_t> off(pl.region.size());
      for (size_t k = 0; k < pl.region.size(); ++k) off[k] = pl.region[k].offset.eval(*first.b);
      return std::make_pair(&spec_env.at(pl.spec_value), std::move(off));
    };
    // (spec, plan) of element `e` of group `group`, seen through `v`.
    auto value_in = [&](const auto& run, const std::vector<size_t>& group, const auto& v, int64_t e) {
      const auto& inst = run.second;
      auto idx = inst[group[0]].value.index_of(e);
      for (size_t k = 0; k < v.second.size(); ++k) idx[k] += v.second[k];
      long double plan = 0;
      for (size_t m : group) plan += inst[m].value.data[static_cast<size_t>(e)];
      // In the run's own precision (a value past double's range stays finite in extended).
      return std::pair<long double, long double>{v.first->data[static_cast<size_t>(v.first->flat(idx))], plan};
    };
    auto value_at = [&](const auto& run, const std::vector<std::vector<size_t>>& groups, size_t gi, int64_t e) {
      return value_in(run, groups[gi], view(run, groups, gi), e);
    };
    // The counterexample at element `e` of group `g` of `run` (the double
    // run of point `k`), with its extended-precision values.
    auto found = [&](const auto& run, const std::vector<std::vector<size_t>>& groups, size_t g, int64_t e,
                     long double sv2, long double pv2, size_t k, bool at_hint, bool stable, bool focused) {
      const auto& first = run.second[groups[g][0]];
      const ir::Placement& pl = p.placements[first.placement];
      Counterexample c;
      c.program = pl.program;
      c.value = pl.value;
      c.spec_value = pl.spec_value;
      c.op = first.op();
      c.rank = p.mesh.rank_str(first.rank);
      c.rank_id = first.rank;
      if (groups[g].size() > 1) c.rank += " (summed over " + std::to_string(groups[g].size()) + " ranks)";
      c.iter = first.iter;
      c.plan_index = first.value.index_of(e);
      c.spec_index = c.plan_index;
      for (size_t d = 0; d < pl.region.size(); ++d) c.spec_index[d] += pl.region[d].offset.eval(*first.b);
      if (at_hint) {
        // The stage's terms, over the placed values the stage reads (each
        // taken equal to its spec region).
        c.spec_expr = hint_->spec_expr;
        c.plan_expr = hint_->plan_expr;
        c.difference = hint_->difference + " (terms over the stage's inputs)";
      } else {
        c.spec_expr = c.plan_expr = "(not built: refuted by evaluating the whole plan numerically)";
      }
      c.spec_num = static_cast<double>(sv2);
      c.plan_num = static_cast<double>(pv2);
      c.found_by = std::string(focused ? "numeric evaluation of the plan up to this value" : "numeric evaluation of the whole plan") +
                   " at random point " + std::to_string(k + 1) + " (seed " +
                   std::to_string(opt_.seed) + "), re-checked in extended precision" +
                   (undefined_in_plan(sv2, pv2) ? ": the plan is not finite where the spec is"
                    : stable ? ": a difference below the tolerance, stable between double and extended precision"
                             : "");
      Verdict v;
      v.kind = VerdictKind::mismatch;
      v.cex = c;
      v.failed = 1;
      v.obligations = 0;
      return v;
    };
    // With a spare core the extended-precision run of a point goes alongside
    // the double one, so confirming a divergence costs no extra time.
    bool ahead = (opt_.threads ? opt_.threads : std::thread::hardware_concurrency()) > 1;
    using LongRun = decltype(run_numeric<long double>(st, tt, sym_in, points[0]));
    // The long run reads this frame's data: it is waited for on every path out.
    struct Join {
      std::future<LongRun>& f;
      ~Join() {
        if (f.valid()) f.wait();
      }
    };
    // First the element where the staged prover found the stage's terms to
    // differ: the runs stop as soon as its obligation group is defined, which
    // in a plan of many layers is long before the end of the step. A hint
    // that does not diverge in both precisions leaves the search to the full
    // runs below.
    if (std::optional<Focus> f = focus_on()) {
      auto hinted = [&](const auto& run, const std::vector<std::vector<size_t>>& groups) -> std::optional<size_t> {
        for (size_t gi = 0; gi < groups.size(); ++gi)
          for (size_t m : groups[gi]) {
            const auto& in = run.second[m];
            if (in.placement == hint_->placement && in.rank == hint_->rank)
              return groups[gi].size() == f->expected && hint_->elem < in.value.size() ? std::optional<size_t>(gi)
                                                                                     : std::nullopt;
          }
        return std::nullopt;
      };
      for (size_t k = 0; k < points.size(); ++k) {
        std::future<LongRun> long_run;
        if (ahead)
          long_run = std::async(std::launch::async,
                                [&, k] { return run_numeric<long double>(st, tt, sym_in, points[k], &*f); });
        Join join{long_run};
        auto run = run_numeric<double>(st, tt, sym_in, points[k], &*f);
        auto groups = group_instances(run.second);
        std::optional<size_t> g = hinted(run, groups);
        if (!g) continue;
        if (auto [a, b] = value_at(run, groups, *g, hint_->elem); !diverges(a, b)) continue;
        auto again = long_run.valid() ? long_run.get() : run_numeric<long double>(st, tt, sym_in, points[k], &*f);
        if (group_instances(again.second) != groups) continue;
        auto [sv2, pv2] = value_at(again, groups, *g, hint_->elem);
        if (!diverges(sv2, pv2)) continue;
        return found(run, groups, *g, hint_->elem, sv2, pv2, k, true, false, true);
      }
    }
    for (size_t k = 0; k < points.size(); ++k) {
      std::future<LongRun> long_run;
      if (ahead)
        long_run = std::async(std::launch::async, [&, k] { return run_numeric<long double>(st, tt, sym_in, points[k]); });
      Join join{long_run};
      auto run = run_numeric<double>(st, tt, sym_in, points[k]);
      auto groups = group_instances(run.second);
      size_t g = 0;
      int64_t e = -1;
      bool at_hint = false;
      // The element where the stage's terms differ, if it differs here too:
      // the divergence at its source rather than where it grew past the tolerance.
      if (hint_)
        for (size_t gi = 0; gi < groups.size() && e < 0; ++gi) {
          const auto& in = run.second[groups[gi][0]];
          if (in.placement != hint_->placement || in.rank != hint_->rank || in.iter != hint_->iter) continue;
          if (hint_->elem >= in.value.size()) break;
          auto [a, b] = value_at(run, groups, gi, hint_->elem);
          if (diverges(a, b)) g = gi, e = hint_->elem, at_hint = true;
        }
      for (size_t gi = 0; gi < groups.size() && e < 0; ++gi) {
        const auto v = view(run, groups, gi);
        for (int64_t x = 0; x < run.second[groups[gi][0]].value.size(); ++x) {
          auto [a, b] = value_in(run, groups[gi], v, x);
          if (diverges(a, b)) {
            g = gi, e = x;
            break;
          }
        }
      }
      // Re-check that element in extended precision (same instances, same
      // order); with none over the tolerance, look for a difference below it
      // that is stable between the two precisions (as the symbolic check's
      // screening does).
      auto again = long_run.valid() ? long_run.get() : run_numeric<long double>(st, tt, sym_in, points[k]);
      auto groups2 = group_instances(again.second);
      if (groups2 != groups) continue;
      bool stable = false;
      for (size_t gi = 0; gi < groups.size() && e < 0; ++gi) {
        const auto v = view(run, groups, gi);
        const auto v2 = view(again, groups2, gi);
        for (int64_t x = 0; x < run.second[groups[gi][0]].value.size(); ++x) {
          auto [sd, pd] = value_in(run, groups[gi], v, x);
          auto [sl, pl] = value_in(again, groups2[gi], v2, x);
          if (differs_stably(static_cast<double>(sd), static_cast<double>(pd), sl, pl)) {
            g = gi, e = x, stable = true;
            break;
          }
        }
      }
      if (e < 0) continue;
      auto [sv2, pv2] = value_at(again, groups2, g, e);
      if (!stable && !diverges(sv2, pv2)) continue;
      return found(run, groups, g, e, sv2, pv2, k, at_hint, stable, false);
    }
    return std::nullopt;
  }

  std::vector<Obl> build_obligations(const Setup& st, const std::vector<Instance<TermId>>& inst,
                                     const std::map<std::string, Tensor<TermId>>& spec_env, TermTable& tt) {
    std::vector<Obl> out;
    const ir::Plan& p = c_.plan;
    std::map<std::string, std::vector<bool>> covered;
    for (const auto& o : c_.spec->graph.outputs) covered[o].assign(static_cast<size_t>(ir::sem::num_el(st.spec_shapes.at(o))), false);
    std::vector<std::vector<size_t>> ordered = group_instances(inst);
    for (const auto& members : ordered) {
      const Instance<TermId>& first = inst[members[0]];
      const ir::Placement& pl = p.placements[first.placement];
      auto se = spec_env.find(pl.spec_value);
      if (se == spec_env.end()) continue;  // validated: cannot happen
      const Tensor<TermId>& sv = se->second;
      std::vector<int64_t> off(sv.rank(), 0);
      for (size_t k = 0; k < pl.region.size(); ++k) off[k] = pl.region[k].offset.eval(*first.b);
      auto cov = covered.find(pl.spec_value);
      for (int64_t e = 0; e < first.value.size(); ++e) {
        auto idx = first.value.index_of(e);
        for (size_t k = 0; k < idx.size(); ++k) idx[k] += off[k];
        TermId pt;
        if (members.size() == 1 && pl.kind == ir::PlacementKind::region) {
          pt = first.value.data[static_cast<size_t>(e)];
        } else {
          std::vector<TermId> parts;
          for (size_t m : members) parts.push_back(inst[m].value.data[static_cast<size_t>(e)]);
          pt = tt.sum(parts);
        }
        int64_t sflat = sv.flat(idx);
        if (cov != covered.end()) cov->second[static_cast<size_t>(sflat)] = true;
        out.push_back(Obl{members[0], members, first.placement, e, idx, sv.data[static_cast<size_t>(sflat)], pt});
      }
    }
    instances_ = inst.size();
    for (const auto& [name, bits] : covered)
      for (size_t k = 0; k < bits.size(); ++k)
        if (!bits[k]) {
          Tensor<TermId> shape_only;
          shape_only.shape = st.spec_shapes.at(name);
          coverage_value_ = name;
          coverage_error_ = "spec output '" + name + "' element " + idx_str(shape_only.index_of(static_cast<int64_t>(k))) +
                            " is produced by no plan value (placements do not cover it)";
          return out;
        }
    sym_instances_ = &inst;
    return out;
  }

  // Runs spec and plan concretely at `pt` and returns (spec, plan) per obligation.
  template <class F>
  std::vector<std::pair<F, F>> eval_numeric(const Setup& st, const TermTable& tt,
                                            const std::map<std::string, Tensor<TermId>>& sym_in,
                                            const std::vector<double>& pt, const std::vector<Obl>& obls) {
    auto [spec_env, inst] = run_numeric<F>(st, tt, sym_in, pt);
    std::vector<std::pair<F, F>> out;
    out.reserve(obls.size());
    for (const auto& o : obls) {
      const ir::Placement& pl = c_.plan.placements[o.placement];
      const Tensor<F>& sv = spec_env.at(pl.spec_value);
      F plan = 0;
      for (size_t m : o.members) plan += inst.at(m).value.data[static_cast<size_t>(o.elem)];
      out.push_back({sv.data[static_cast<size_t>(sv.flat(o.spec_index))], plan});
    }
    return out;
  }

  void make_cex(Verdict& v, const TermTable& tt, const std::vector<Obl>& obls, size_t i, const std::vector<double>& pt,
                double s, double pl, const std::string& how) {
    if (v.cex) return;
    const Obl& o = obls[i];
    const Instance<TermId>& in = (*sym_instances_)[o.instance];
    const ir::Placement& p = c_.plan.placements[o.placement];
    Counterexample c;
    c.program = p.program;
    c.value = p.value;
    c.spec_value = p.spec_value;
    c.op = in.op();
    c.rank = c_.plan.mesh.rank_str(in.rank);
    c.rank_id = in.rank;
    if (o.members.size() > 1) c.rank += " (summed over " + std::to_string(o.members.size()) + " ranks)";
    c.iter = in.iter;
    c.plan_index = in.value.index_of(o.elem);
    c.spec_index = o.spec_index;
    c.spec_expr = tt.str(o.spec_t);
    c.plan_expr = tt.str(o.plan_t);
    c.difference = tt.diff(o.spec_t, o.plan_t);
    c.spec_num = s;
    c.plan_num = pl;
    std::vector<uint32_t> vars;
    tt.collect_vars(o.spec_t, vars);
    tt.collect_vars(o.plan_t, vars);
    std::sort(vars.begin(), vars.end());
    vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
    for (uint32_t x : vars) {
      if (c.inputs.size() >= 12) break;
      c.inputs.push_back({tt.vars()[x].name, pt[x]});
    }
    c.found_by = how;
    v.cex = c;
  }

  // Before an obligation is expanded or goes to the solvers (both can take
  // long on a term that is not an identity): it is evaluated at points of
  // other magnitudes (every float input of a fresh random point scaled by
  // 1/256, 1/16, 1/4, 4, 16 and 256), made once for every obligation when the first one
  // gets here. A threshold (gradient clipping's min(1, max_norm / norm), a
  // max, a comparison) takes the same branch at every point of one magnitude,
  // so a bug on its other branch is invisible to the screening points, and
  // the solvers would spend their timeout on each obligation downstream of it
  // (thousands: every updated parameter reads the clipping coefficient).
  // True when it recorded a counterexample, re-checked in extended precision.
  bool screen_wide(Verdict& v, const TermTable& tt, const Setup& st,
                   const std::map<std::string, Tensor<TermId>>& sym_in,
                   const std::vector<Obl>& obls, size_t i) {
    if (!wide_made_) {
      wide_made_ = true;
      std::mt19937_64 rng(opt_.seed ^ 0x9e3779b97f4a7c15ULL);
      for (double f : {1.0 / 256, 1.0 / 16, 1.0 / 4, 4.0, 16.0, 256.0, 4096.0}) {
        std::vector<double> pt = random_point(tt, rng, true, false);
        for (size_t k = 0; k < pt.size(); ++k)
          if (!tt.vars()[k].boolean && !tt.vars()[k].integer) pt[k] *= f;
        try {
          num_wide_.push_back(eval_numeric<double>(st, tt, sym_in, pt, obls));
          wide_points_.emplace_back(f, std::move(pt));
        } catch (const std::exception&) {
          // A point the plan or spec cannot be evaluated at is not used.
        }
      }
    }
    for (size_t k = 0; k < wide_points_.size(); ++k) {
      auto [s, p] = num_wide_[k][i];
      // Overflow in double: the extended run below may still be finite.
      if (!diverges(s, p)) continue;
      const auto& [scale, pt] = wide_points_[k];
      // A value that overflowed or underflowed on the way (exp of -1e5 is 0
      // even in extended precision, and log of it -inf) can make a finite
      // result wrong: such a point decides nothing.
      constexpr int kRangeLost = FE_OVERFLOW | FE_UNDERFLOW | FE_DIVBYZERO | FE_INVALID;
      // Nor does a top-k row that ties at its k-th value: which of the tied
      // entries is selected is the rounding's choice (scaled logits saturate
      // a sigmoid to exactly 1.0 for several experts).
      std::feclearexcept(kRangeLost);
      ir::topk_tied = false;
      auto again = eval_numeric<long double>(st, tt, sym_in, pt, {obls[i]});
      if (std::fetestexcept(kRangeLost) || ir::topk_tied || !diverges_finite(again[0].first, again[0].second)) continue;
      char how[128];
      std::snprintf(how, sizeof how,
                    "concrete evaluation at a random point with its float inputs scaled by %g",
                    scale);
      make_cex(v, tt, obls, i, pt, static_cast<double>(again[0].first),
               static_cast<double>(again[0].second), how);
      return true;
    }
    return false;
  }

  // 0 proved, 1 refuted (with a counterexample recorded), 2 unknown, 3 not
  // decided because a mismatch was already shown.
  int decide(Verdict& v, TermTable& tt, const Setup& st, const std::map<std::string, Tensor<TermId>>& sym_in,
             const std::vector<Obl>& obls, const std::vector<std::vector<std::pair<double, double>>>& num,
             const std::vector<std::vector<double>>& points, size_t i,
             const std::vector<std::unique_ptr<SmtBackend>>& solvers, bool prove = true) {
    const Obl& o = obls[i];
    if (o.spec_t == o.plan_t && !opt_.smt_all) {
      // Equal by a canonical form that cancelled a denominator which can be
      // 0: the points (one with masks mostly off) say whether the plan is
      // undefined where the spec is not.
      if (!tt.zero_cancelled().empty())
        for (size_t k = 0; k < points.size(); ++k) {
          auto [s, p] = num[k][i];
          if (!undefined_in_plan(s, p)) continue;
          if (v.cex) return 1;
          auto again = eval_numeric<long double>(st, tt, sym_in, points[k], {o});
          if (!undefined_in_plan(again[0].first, again[0].second)) continue;
          make_cex(v, tt, obls, i, points[k], static_cast<double>(again[0].first),
                   static_cast<double>(again[0].second),
                   "concrete evaluation at a point with masks mostly off: the plan is not finite where the spec is "
                   "(it divides by a count that is 0 there, which its canonical form cancelled)");
          return 1;
        }
      ++v.by_hash;
      return 0;
    }
    // Screening. With --smt-all it only counts failures after the solver has
    // produced the shown counterexample.
    if (!opt_.smt_all || v.cex) {
      for (size_t k = 0; k < points.size(); ++k) {
        auto [s, p] = num[k][i];
        if (!diverges(s, p)) continue;
        if (v.cex) return 1;  // the shown counterexample is re-checked; later ones are counted
        // Re-check in extended precision before believing it.
        auto again = eval_numeric<long double>(st, tt, sym_in, points[k], {o});
        if (diverges(again[0].first, again[0].second)) {
          bool undefined = undefined_in_plan(again[0].first, again[0].second);
          make_cex(v, tt, obls, i, points[k], static_cast<double>(again[0].first), static_cast<double>(again[0].second),
                   undefined ? "concrete evaluation at a random point: the plan is not finite where the spec is "
                               "(in double and in extended precision)"
                             : "concrete evaluation at a random point");
          return 1;
        }
      }
      // Below the tolerance: a difference that is stable between double and
      // extended precision. The extended runs are made once, for every
      // obligation, when the first one gets here.
      if (num_long_.empty() && !points.empty())
        for (const auto& pt : points) num_long_.push_back(eval_numeric<long double>(st, tt, sym_in, pt, obls));
      for (size_t k = 0; k < num_long_.size(); ++k) {
        auto [s, p] = num[k][i];
        auto [sl, pl] = num_long_[k][i];
        if (!differs_stably(s, p, sl, pl)) continue;
        if (v.cex) return 1;
        make_cex(v, tt, obls, i, points[k], static_cast<double>(sl), static_cast<double>(pl),
                 "concrete evaluation at a random point (a difference below the tolerance, stable between double "
                 "and extended precision)");
        return 1;
      }
    }
    // Once a mismatch is shown the verdict is settled: the remaining pairs are
    // only counted, not proved (expansion and solvers can be slow on them).
    if (v.cex) {
      ++v.unchecked;
      return 3;
    }
    if (!prove) return 2;  // screened only
    if (!opt_.smt_all && screen_wide(v, tt, st, sym_in, obls, i)) return 1;
    if (!opt_.smt_all && tt.equal_by_parts(o.spec_t, o.plan_t, opt_.expand_budget)) {
      ++v.by_expansion;
      return 0;
    }
    if (!opt_.smt_all) {
      try {
        TermId a = tt.expand(o.spec_t, opt_.expand_budget), b = tt.expand(o.plan_t, opt_.expand_budget);
        if (a == b) {
          ++v.by_expansion;
          return 0;
        }
      } catch (const BudgetExceeded&) {
      } catch (const NotSmall&) {
      }
    }
    if (o.spec_t == o.plan_t) {
      ++v.by_hash;
      return 0;
    }
    // Solvers take unbounded time to even read a very large term (the time
    // limit starts after); such an obligation is UNKNOWN, not a hang.
    if (dag_size(tt, o.spec_t) + dag_size(tt, o.plan_t) > opt_.max_smt_nodes) {
      unknown_reason_ = "an obligation too large for the solver (more than " + std::to_string(opt_.max_smt_nodes) +
                        " term nodes) was neither equal by canonical form nor refuted at the screening points";
      return 2;
    }
    int result = -1;
    for (const auto& s : solvers) {
      SmtAnswer a = s->prove_equal(tt, o.spec_t, o.plan_t, solver_timeout_ms());
      int r = 2;
      if (a.status == SmtStatus::proved) {
        r = 0;
      } else if (a.status == SmtStatus::refuted) {
        // The model fixes the variables; functions keep their real meaning.
        std::vector<double> pt = points.empty() ? std::vector<double>(nvars_, 0.5) : points[0];
        for (auto& [idx, val] : a.model) pt[idx] = val;
        auto again = eval_numeric<long double>(st, tt, sym_in, pt, {o});
        if (!diverges(again[0].first, again[0].second)) {
          // A model that divides by zero is no point of the plan: ask for
          // one with every denominator nonzero.
          SmtAnswer d = s->find_defined_model(tt, o.spec_t, o.plan_t, solver_timeout_ms());
          if (d.status == SmtStatus::refuted) {
            for (auto& [idx, val] : d.model) pt[idx] = val;
            again = eval_numeric<long double>(st, tt, sym_in, pt, {o});
          }
        }
        if (diverges(again[0].first, again[0].second)) {
          make_cex(v, tt, obls, i, pt, again[0].first, again[0].second, std::string(s->name()) + " model");
          r = 1;
        } else {
          unknown_reason_ = std::string(s->name()) + " found a model only under an abstract interpretation of exp/log/...; "
                            "it does not reproduce concretely";
          r = 2;
        }
      } else {
        unknown_reason_ = a.reason.empty() ? std::string(s->name()) + ": unknown" : a.reason;
      }
      if (result == -1) result = r;
      else if (result != r && r != 2 && result != 2) {
        unknown_reason_ = "solvers disagree";
        result = 2;
      } else if (r == 2) {
        result = 2;
      }
    }
    if (result == 0) ++v.by_smt;
    return result;
  }

  static size_t dag_size(const TermTable& tt, TermId t) {
    std::set<TermId> seen;
    std::vector<TermId> todo{t};
    while (!todo.empty()) {
      TermId x = todo.back();
      todo.pop_back();
      if (!seen.insert(x).second) continue;
      for (TermId a : tt.node(x).args) todo.push_back(a);
    }
    return seen.size();
  }

  const ir::Case& c_;
  std::string file_;
  VerifyOptions opt_;
  bool validated_ = false;
  bool numeric_first_ = false;
  bool numeric_only_ = false;
  std::string numeric_note_;  // why the numeric run gave up, when it did
  bool numeric_ran_ = false;  // a numeric run of the whole plan finished
  std::function<std::optional<Verdict>()> before_proving_;
  const StageFailure* hint_ = nullptr;
  size_t nvars_ = 0;
  size_t instances_ = 0;
  std::string coverage_error_, coverage_value_, unknown_reason_;
  std::set<std::string> is_state_;
  const std::vector<Instance<TermId>>* sym_instances_ = nullptr;
  std::vector<std::vector<std::pair<long double, long double>>> num_long_;  // [point][obligation], made on demand
  // Screening at other magnitudes (see screen_wide), made on demand.
  bool wide_made_ = false;
  std::vector<std::pair<double, std::vector<double>>> wide_points_;  // (scale, point)
  std::vector<std::vector<std::pair<double, double>>> num_wide_;     // [point][obligation]
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

namespace {
// Whether the plan unrolls to more than `limit` instructions over all ranks.
bool rank_instructions_over(const ir::Case& c, size_t limit) {
  ir::Bindings base = c.plan.dims;
  if (c.spec)
    for (const auto& [k, v] : c.spec->dims) base.emplace(k, v);
  for (const auto& a : c.plan.mesh.axes) base[a.name] = a.size;
  return rank_instructions_upto(c, base, limit) > limit;
}

// Runs of an instance reduced past literals equal to sizes (one per
// combination of readings): more and the UNKNOWN stands.
constexpr size_t kMaxReadings = 16;

// The lineage is an aid for reading the counterexample; failing to build it
// never changes the verdict.
void add_lineage(Counterexample& x, const ir::Case& c, const reduce::StageGraph* g, uint64_t seed,
                 const std::function<std::string(int64_t)>& rank_name) {
  try {
    std::unique_ptr<reduce::StageGraph> own;
    if (!g) g = (own = std::make_unique<reduce::StageGraph>(c)).get();
    std::vector<int32_t> nodes;
    x.lineage = lineage(*g, x.rank_id, x.value, x.iter, 40, rank_name, &nodes);
    // The cause is an aid on top of the lineage: failing to find it keeps the lineage.
    const size_t walked = x.lineage.size();
    try {
      x.culprit = find_culprit(*g, x.lineage, nodes, seed, rank_name);
    } catch (const std::exception&) {
      x.culprit.reset();
      x.lineage.resize(walked);  // a step it appended before failing is dropped
    }
  } catch (const std::exception&) {
    x.lineage.clear();
    x.culprit.reset();
  }
}
}  // namespace

namespace {
// The VERIFIED verdict of a case whose stages all proved.
Verdict staged_verdict(const StagedResult& sr, const ir::Case& proved, const VerifyOptions& opt) {
  Verdict v;
  v.kind = VerdictKind::verified;
  v.solver = opt.solver;
  v.obligations = v.unique = sr.obligations;
  v.by_expansion = sr.by_expansion;
  v.by_hash = sr.obligations - sr.by_expansion;
  v.stages = sr.stages;
  v.unique_stages = sr.unique;
  v.cached_stages = sr.cached;
  v.stage_list = sr.list;
  for (const auto& [idx, n] : sr.placed_elements) {
    const ir::Placement& pl = proved.plan.placements[idx];
    PlacementStats ps;
    ps.label = pl.program + "." + pl.value + " -> " + pl.spec_value;
    ps.obligations = ps.proved = n;
    v.placements.push_back(ps);
  }
  return v;
}
}  // namespace

// "dp 64 -> 2, dim B 1024 -> 4": a reduction's list as one line.
static std::string comma_list(const std::vector<std::string>& xs) { return fmt::format("{}", fmt::join(xs, ", ")); }

// Plans up to this many rank-instructions as given are also run numerically
// after their reduced instance verifies (see verify_case).
constexpr size_t kCrossCheckRankInstructions = 200'000;
constexpr size_t kSecondLookRankInstructions = 50'000;

Verdict verify_case(const ir::Case& c, const std::string& file, const VerifyOptions& opt) {
  try {
    if (!opt.reduce) {
      Verdict v = Checker(c, file, opt).run();
      v.verified_ranks = c.plan.mesh.num_ranks();
      // Unreduced: the lineage graph of a very large mesh is not worth building.
      if (v.cex && v.cex->rank_id >= 0 && v.verified_ranks <= 1024)
        add_lineage(*v.cex, c, nullptr, opt.seed, [&](int64_t rk) { return c.plan.mesh.rank_str(rk); });
      return v;
    }
    auto t0 = std::chrono::steady_clock::now();
    // The original is validated in full except for a schedule too large to
    // simulate, which is simulated on the reduced instance.
    progress_start(opt.progress, "validating");
    // The types of the plan as given are kept for the layer fold's stubs.
    const bool fold_first = opt.fold && opt.stages && !opt.smt_all;
    ir::TypeMap given_spec_types;
    std::map<std::string, ir::TypeMap> given_types;
    ir::DiagList d = ir::validate_case(c, file, opt.schedule_budget, opt.threads,
                                       fold_first ? &given_spec_types : nullptr,
                                       fold_first ? &given_types : nullptr);
    if (!d.empty()) {
      return invalid_verdict(d);
    }
    const double validate_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    reduce::Options ro;
    ro.threads = opt.threads;
    ro.keep_sizes = opt.keep_sizes;
    // The top-k operands' types as given, kept past the fold (which frees the rest).
    std::map<std::string, ir::TypeMap> selection_types;
    if (fold_first) {
      ro.given_spec_types = &given_spec_types;
      ro.given_types = &selection_types;
    }
    StageOptions so;
    so.expand_budget = std::min<size_t>(opt.expand_budget, 5000);
    so.max_rank_instructions = opt.max_rank_instructions;
    so.max_terms = opt.max_terms;
    so.cache_dir = opt.cache_dir;
    so.progress = opt.progress;
    so.threads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
    so.shards = opt.shards;
    // The layer fold comes first, on the plan as given: only its folded case
    // is reduced, validated and proved by stages, and only a VERIFIED of it is
    // used (docs/soundness.md, "Layer fold"). Anything else checks the plan
    // the unfolded way below, which does not fold again.
    // A reduced VERIFIED is looked at once more before it is reported. The
    // reductions keep the sizes an index reads apart and pin literals, but a
    // condition their checks miss would make the reduced instance right only
    // at its own sizes. A plan small enough to run as given is run at the
    // screening points; a difference there (re-checked in extended
    // precision) is the verdict. A larger one (`base`: the case reduced, the
    // folded case for a fold) is reduced a second way, 3 coordinates of each
    // run and sizes at least 3. That instance is run whole if it unrolls to
    // at most 50,000 rank-instructions; a larger one (the anchors' would take
    // seconds to minutes to run) is proved by stages, and only a stage that
    // does not prove is run. A difference there makes the verdict UNKNOWN:
    // the two instances disagree, so neither is believed.
    std::string look_note;  // what the second look ran, when it found nothing
    bool look_generalizes = false;  // the second look of a proof with literals read as indeterminates
    auto second_look = [&](const Verdict& v, const ir::Case& base, const std::vector<std::string>& reductions,
                           const std::set<std::string>* assumed,
                           const reduce::OpenStages* open) -> std::optional<Verdict> {
      if (v.kind != VerdictKind::verified) return std::nullopt;
      const std::string applied = comma_list(reductions);
      // A difference confirmed on the plan as given is its counterexample.
      auto as_given_mismatch = [&](Verdict nv) {
        nv.cex->found_by += "; found on the plan as given, whose reduced instance (" + applied +
                            ") verified: the reduction hid the difference (sizes that coincide only in the reduced "
                            "instance, or a condition of a reduction its checks missed)";
        nv.verified_ranks = c.plan.mesh.num_ranks();
        nv.kept = v.kept;
        if (nv.cex->rank_id >= 0)
          add_lineage(*nv.cex, c, nullptr, opt.seed, [&](int64_t rk) { return c.plan.mesh.rank_str(rk); });
        nv.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return nv;
      };
      // Few instructions can still hold tensors too large to run as given
      // (a column-parallel matmul at 8192 x 4096 x 16384): those take the
      // second reduced instance below.
      ir::Bindings given = c.plan.dims;
      if (c.spec)
        for (const auto& [k, x] : c.spec->dims) given.emplace(k, x);
      for (const auto& a : c.plan.mesh.axes) given[a.name] = a.size;
      const size_t as_given_cap = 10 * opt.max_terms;
      if (!rank_instructions_over(c, kCrossCheckRankInstructions) &&
          symbolic_terms_upto(c, given, as_given_cap, /*ranks=*/false) <= as_given_cap) {
        progress_start(opt.progress, "running the plan as given at the screening points");
        Checker as_given(c, file, opt, true);
        Verdict nv = as_given.refute_only();
        if (nv.kind == VerdictKind::mismatch && nv.cex) return as_given_mismatch(std::move(nv));
        if (as_given.ran_numeric()) {
          look_note = "the plan as given shows no difference at the screening points";
          return std::nullopt;
        }
        // Few instructions but tensors too large to run as given (a long
        // sequence's attention scores): a second reduced instance instead.
      }
      reduce::Options ao = ro;
      ao.keep = 3;
      ao.least = 3;
      ao.second_look = true;
      ao.generalize_literals = look_generalizes;
      progress_start(opt.progress, "running a second reduced instance at other sizes");
      reduce::Result alt = reduce::reduce_case(base, ao);
      // Sizes kept apart that the plan needs equal (a microbatch of one row:
      // B/dp/M*S broadcast against S) make that instance invalid: the second
      // look then uses the plain instance at 3 coordinates and sizes 3.
      // Sizes kept apart can also grow far (DeepSeek-V3's ep 64 -> 32 and B
      // 2048 -> 1024, past any memory): that instance is used only where no
      // size is more than 4 times the plain one's.
      reduce::Options po = ao;
      po.second_look = false;
      if (alt.invalid_at.empty()) {
        auto too_large = [&alt](const reduce::Result& plain) {
          std::map<std::string, int64_t> at;
          for (const auto& [k, v] : plain.dims) at[k] = v.second;
          for (const auto& m : plain.axes) at[m.axis] = m.to;
          for (const auto& [k, v] : alt.dims)
            if (auto it = at.find(k); it != at.end() && v.second > 4 * it->second) return true;
          for (const auto& m : alt.axes)
            if (auto it = at.find(m.axis); it != at.end() && m.to > 4 * it->second) return true;
          return false;
        };
        // The plain instance's sizes first (the rounds alone, about a third
        // of reducing and validating it at 126 layers); the instance itself
        // only when it is used. A plain instance that does not validate keeps
        // sizes, so its own sizes are compared again.
        reduce::Options so_sizes = po;
        so_sizes.sizes_only = true;
        if (too_large(reduce::reduce_case(base, so_sizes))) {
          reduce::Result plain = reduce::reduce_case(base, po);
          if (too_large(plain)) alt = std::move(plain);
        }
      } else {
        alt = reduce::reduce_case(base, po);
      }
      auto second_applied = [&alt] { return comma_list(alt.applied); };
      // Nothing to reduce at those sizes: the second instance is `base` itself.
      const ir::Case& second_case = alt.changed ? alt.reduced : base;
      if (!alt.changed) alt.applied = {"none: the " + std::string(assumed ? "folded case" : "plan") + " as given"};
      Verdict nv;
      if (!rank_instructions_over(second_case, kSecondLookRankInstructions)) {
        Checker run2(second_case, file, opt, true);
        nv = run2.refute_only();
        look_note = "a second instance reduced at other sizes (" + second_applied() + ") " +
                    (run2.ran_numeric() ? "shows no difference at the screening points"
                                        : "is too large to run (" + nv.reason + ")");
      } else {
        // Too large to run whole at the screening points: its stages are
        // built and proved as the first instance's were (about what that
        // cost), and a stage that does not prove is run numerically,
        // starting where it differs. Only a confirmed difference counts: a
        // stage the canonical forms miss is no reason to doubt the proof.
        // By stages whatever `--no-stages` or `--smt-all` chose for the first
        // proof: this is a cross-check, and skipping it let a reduction's
        // missed condition through (a ring rotation by a doubled buffer,
        // right at cp = 2 only: context-parallel/cp_bug_ring_dir_doubled_buffer_*).
        progress_start(opt.progress, "proving a second reduced instance at other sizes");
        StageOptions ao2 = so;
        ao2.spec_types = alt.changed ? &alt.spec_types : nullptr;
        std::set<double> alt_literals;
        for (const auto& [x, why] : alt.generalized) alt_literals.insert(x);
        ao2.literals = &alt_literals;
        ao2.assumed = assumed;
        ao2.open = open;
        ao2.cache_dir.clear();
        // A cross-check: a stage whose terms grow past this is not worth
        // proving here (the long-context plan's attention at S/cp = 5 with
        // the scale an indeterminate grew for a minute).
        ao2.max_term_bytes = size_t{512} << 20;
        StagedResult asr = prove_by_stages(second_case, ao2);
        const std::string what = "a second instance reduced at other sizes (" + second_applied() + ") ";
        // A count cancelled that can be 0: run it too, where that is cheap.
        if (asr.proved && asr.zero_cancelled > 0 && !rank_instructions_over(second_case, kCrossCheckRankInstructions)) {
          asr.proved = false;
          asr.reason = "its stages cancelled a count that can be 0";
        }
        if (asr.proved) {
          look_note = what + "proves by stages";
          return std::nullopt;
        }
        // A stage that gave up for its size (no element found different) is
        // no reason to run a large instance whole: that is where memory goes.
        if (rank_instructions_over(second_case, opt.max_rank_instructions) ||
            (!asr.failure && rank_instructions_over(second_case, kCrossCheckRankInstructions))) {
          look_note = what + "does not prove by stages (" + asr.reason + ") and is too large to run";
          return std::nullopt;
        }
        Checker run2(second_case, file, opt, true, true, asr.failure ? &*asr.failure : nullptr);
        nv = run2.refute_only();
        look_note = what + "does not prove by stages (" + asr.reason + "); " +
                    (run2.ran_numeric() ? "run, it shows no difference" : "too large to run (" + nv.reason + ")");
      }
      if (nv.kind != VerdictKind::mismatch || !nv.cex) return std::nullopt;
      look_note.clear();
      if (!alt.changed && !assumed) return as_given_mismatch(std::move(nv));
      const std::string second = second_applied();
      Verdict u = v;
      u.kind = VerdictKind::unknown;
      u.reason = "the reduced instance (" + applied + ") verified, but a second instance reduced at other sizes (" +
                 second + ") differs numerically at " + nv.cex->value + " on rank " +
                 (alt.changed ? alt.original_rank_str(base.plan.mesh, nv.cex->rank_id)
                              : base.plan.mesh.rank_str(nv.cex->rank_id)) +
                 ": a reduction's condition does not hold that its checks missed, or a literal stands for a "
                 "size at those sizes; `--no-reduce` checks the plan as given";
      u.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return u;
    };
    // A look that runs out of memory found no difference: the reduced
    // VERIFIED stands, and the note says the look could not be made.
    auto guarded_look = [&](const Verdict& v, const ir::Case& base, const std::vector<std::string>& reductions,
                            const std::set<std::string>* assumed,
                            const reduce::OpenStages* open = nullptr) -> std::optional<Verdict> {
      try {
        return second_look(v, base, reductions, assumed, open);
      } catch (const std::bad_alloc&) {
        look_note = "the second look ran out of memory (tensors too large at its sizes) and was not made";
        return std::nullopt;
      }
    };
    // A proof by stages that cancelled a count that can be 0 (y * y^-1 = 1,
    // y a sum of masks) holds where no such count is 0. The case it proved
    // is run at the screening points, one of them with masks mostly off: a
    // plan that divides by a count its spec does not (a context-parallel
    // rank's own token count) is not finite there.
    auto zero_counts = [&](const StagedResult& s, const ir::Case& k) -> std::optional<Verdict> {
      if (s.zero_cancelled == 0 || rank_instructions_over(k, kCrossCheckRankInstructions)) return std::nullopt;
      progress_start(opt.progress, "running the proved case where a count can be 0");
      Verdict nv = Checker(k, file, opt, true).refute_only();
      if (nv.kind != VerdictKind::mismatch || !nv.cex) return std::nullopt;
      nv.cex->found_by += "; its stages proved equal by cancelling a count that can be 0 (y / y = 1), and is 0 here";
      return nv;
    };
    // Literals as indeterminates: a literal of a scalar attribute (a scale
    // factor, an addend, a filled value) equal to a size as given would keep
    // that size (the attention scale 1/sqrt(128) keeps head dim and sequence
    // at 128). This attempt reduces past it and proves every stage of the
    // reduced instance with each such value read as one indeterminate, spec
    // and plan alike: a proof for every value of it is a proof of a case in
    // which no literal can stand for a size, which the reductions' argument
    // carries to the sizes as given, and then to the value as written
    // (docs/soundness.md, "Literals read as indeterminates"). Only its VERIFIED is used; anything
    // else goes on to the attempts below, with the literal pinning.
    bool literals_unproved = false;  // the attempt had literals to read so, and did not prove
    auto literal_attempt = [&](const ir::Case& base, const reduce::LayerFold* fold,
                               double fold_s) -> std::optional<Verdict> {
      if (!opt.stages || opt.smt_all) return std::nullopt;
      reduce::Options go = ro;
      go.generalize_literals = true;
      progress_start(opt.progress, "reducing with literals read as indeterminates");
      reduce::Result gr = reduce::reduce_case(base, go);
      if (gr.generalized.empty() || !gr.changed) return std::nullopt;
      const double reduce_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - fold_s;
      std::set<double> lits;
      for (const auto& [x, why] : gr.generalized) lits.insert(x);
      StageOptions go2 = so;
      go2.spec_types = &gr.spec_types;
      go2.literals = &lits;
      // Worth trying only while it is cheap: a plan that does not prove this
      // way is checked the usual way next.
      go2.max_term_bytes = size_t{256} << 20;
      if (fold) {
        go2.assumed = &fold->assumed;
        go2.open = &fold->open;
      }
      StagedResult gsr = prove_by_stages(gr.reduced, go2);
      // A count cancelled that can be 0 is looked at by the usual attempts.
      if (!gsr.proved || gsr.zero_cancelled > 0) {
        literals_unproved = true;
        return std::nullopt;
      }
      Verdict v = staged_verdict(gsr, gr.reduced, opt);
      v.reductions = gr.applied;
      if (fold) v.reductions.push_back(fold->summary);
      for (const auto& [x, why] : gr.generalized)
        v.reductions.push_back("literal " + why + " read as an indeterminate");
      v.kept = gr.kept;
      v.verified_ranks = gr.reduced.plan.mesh.num_ranks();
      v.validate_seconds = validate_s;
      v.reduce_seconds = reduce_s;
      v.fold_seconds = fold_s;
      v.stage_build_seconds = gsr.build_seconds;
      v.stage_prove_seconds = gsr.prove_seconds;
      gsr = StagedResult{};
      gr = reduce::Result{};
      const auto l0 = std::chrono::steady_clock::now();
      look_generalizes = true;
      auto nv = guarded_look(v, base, v.reductions, fold ? &fold->assumed : nullptr, fold ? &fold->open : nullptr);
      look_generalizes = false;
      if (nv) return nv;
      v.second_look = look_note;
      v.second_look_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - l0).count();
      v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return v;
    };
    std::string fold_note;
    double fold_attempt_s = 0;  // the fold, and reducing and proving its case, when that did not verify
    if (fold_first) {
      progress_start(opt.progress, "folding layers");
      const auto f0 = std::chrono::steady_clock::now();
      reduce::LayerFold fold = reduce::fold_layers(c, given_spec_types, given_types, opt.threads);
      selection_types = reduce::selection_operand_types(c, given_types);
      given_types.clear();
      const double fold_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
      if (fold.folded) {
        if (auto gv = literal_attempt(fold.kase, &fold, fold_s)) return *gv;
        progress_start(opt.progress, "reducing the folded case");
        reduce::Result fr = reduce::reduce_case(fold.kase, ro);
        const ir::Case& ft = fr.changed ? fr.reduced : fold.kase;
        // An unreduced folded case is validated here, its schedule included
        // (reduce_case validated a reduced one in full).
        ir::TypeMap unreduced_spec_types;
        std::string why;
        if (!fr.changed) {
          if (rank_instructions_over(fold.kase, 4 * opt.max_rank_instructions))
            why = "its schedule is too large to simulate";
          else if (!ir::validate_case(fold.kase, file, ir::kScheduleBudget, opt.threads, &unreduced_spec_types).empty())
            why = "the folded case does not validate";
        }
        const double reduce_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - fold_s;
        if (why.empty()) {
          StageOptions fo = so;
          fo.spec_types = fr.changed ? &fr.spec_types : &unreduced_spec_types;
          fo.assumed = &fold.assumed;
          fo.open = &fold.open;
          // The fold is worth trying only while it is cheap: a stage that
          // does not prove (a bug in a kept layer) can build terms without
          // end, and the plan is checked unfolded next anyway.
          fo.max_term_bytes = size_t{256} << 20;
          StagedResult sr = prove_by_stages(ft, fo);
          // A difference where a count is 0 is found again unfolded, where
          // it is reported.
          if (sr.proved && zero_counts(sr, ft)) {
            sr.proved = false;
            sr.reason = "it differs where a count its stages cancelled is 0";
          }
          if (sr.proved) {
            Verdict v = staged_verdict(sr, ft, opt);
            v.reductions = fr.applied;
            v.reductions.push_back(fold.summary);
            v.kept = fr.kept;
            v.verified_ranks = ft.plan.mesh.num_ranks();
            v.validate_seconds = validate_s;
            v.reduce_seconds = reduce_s;
            v.fold_seconds = fold_s;
            v.stage_build_seconds = sr.build_seconds;
            v.stage_prove_seconds = sr.prove_seconds;
            if (fr.changed) {
              // The first instance's graph and terms go before the second's are built.
              sr = StagedResult{};
              fr = reduce::Result{};
              const auto l0 = std::chrono::steady_clock::now();
              if (auto nv = guarded_look(v, fold.kase, v.reductions, &fold.assumed, &fold.open)) return *nv;
              v.second_look = look_note;
              v.second_look_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - l0).count();
            }
            v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            return v;
          }
          why = "the folded case does not prove by stages (" + sr.reason + ")";
        }
        fold_note = "layers not folded: " + why + "; checked unfolded";
      } else if (!fold.summary.empty()) {
        fold_note = "layers not folded: " + fold.summary;
      }
      fold_attempt_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
    }
    if (auto gv = literal_attempt(c, nullptr, fold_attempt_s)) return *gv;
    progress_start(opt.progress, "reducing");
    reduce::Result r = reduce::reduce_case(c, ro);
    const ir::Case& target = r.changed ? r.reduced : c;
    // The reduced instance was validated in full by reduce_case; an unreduced
    // one still needs its whole schedule simulated.
    ir::TypeMap spec_types;
    std::map<std::string, ir::TypeMap> program_types;
    // Simulating that schedule can take longer and more memory than the rest
    // (405B long-context, nothing reduced: 13 s, 6 GB). When the plan is too
    // large for any check here (more than four times the rank-instruction
    // limit, past even a numeric run), it is simulated at the end, and only
    // if the verdict is not a counterexample by then.
    bool schedule_deferred = false;
    if (!r.changed) {
      if (rank_instructions_over(c, 4 * opt.max_rank_instructions)) {
        schedule_deferred = true;
        ir::DiagList sd;
        ir::validate_spec(*c.spec, file, sd, &spec_types);
      } else {
        d = ir::validate_case(c, file, ir::kScheduleBudget, opt.threads, &spec_types, &program_types);
        if (!d.empty()) {
          return invalid_verdict(d);
        }
      }
    }
    // Smaller dims keep every equality but can hide a difference that needs
    // the sizes given to show: a gradient norm over fewer elements stays under
    // its clipping threshold, so a wrong norm changes nothing at the points.
    // So before expansion and solvers spend time on the reduced instance (and
    // again if it ends UNKNOWN), the instance with the mesh reduced but the
    // dims as given is run numerically; a difference there, confirmed in
    // extended precision, is a counterexample of the original.
    reduce::Result full;
    const ir::Case* full_case = nullptr;
    bool tried_full = false;
    std::function<std::optional<Verdict>()> search_full_dims = [&]() -> std::optional<Verdict> {
      // Also when nothing was reduced: a reduction of dims alone may have
      // failed (the reduced instance did not validate), the mesh may shrink.
      if (tried_full || (r.changed && r.dims.empty())) return std::nullopt;
      tried_full = true;
      progress_start(opt.progress, "running the plan at its own dims");
      reduce::Options mo = ro;
      mo.shape = false;
      full = reduce::reduce_case(c, mo);
      if (!r.changed && !full.changed) return std::nullopt;  // the instance already checked
      const ir::Case& fc = full.changed ? full.reduced : c;
      Verdict nv = Checker(fc, file, opt, true).refute_only();
      if (nv.kind != VerdictKind::mismatch) return std::nullopt;
      nv.cex->found_by += "; the reduced dims showed no difference, the dims as given did";
      full_case = &fc;
      return nv;
    };
    // Still UNKNOWN (typically too large: literals that equal a size at its
    // reduced value kept sizes until nothing shrank): an instance reduced past
    // those literals, where every size a literal stands for as given is still
    // kept, is run numerically. Those literals guard against hiding a
    // difference, which cannot make a difference shown there unreal.
    reduce::Result loose;
    const ir::Case* loose_case = nullptr;
    auto search_past_pins = [&]() -> std::optional<Verdict> {
      progress_start(opt.progress, "running an instance reduced past coinciding literals");
      reduce::Options lo = ro;
      lo.refute = true;
      loose = reduce::reduce_case(c, lo);
      if (!loose.changed || loose.applied == r.applied) return std::nullopt;
      Verdict nv = Checker(loose.reduced, file, opt, true).refute_only();
      if (nv.kind != VerdictKind::mismatch) return std::nullopt;
      const std::string applied = comma_list(loose.applied);
      nv.cex->found_by += "; found on an instance reduced further than the one checked, past literals that equal a size "
                          "only at its reduced value (" + applied + ")";
      loose_case = &loose.reduced;
      return nv;
    };
    // Still UNKNOWN, and a float literal equal to a size as given kept sizes
    // (a hard-coded 1/64 beside 64 expert-parallel ranks): an instance
    // reduced past those too is run once with every literal as written and
    // once per reading of it as one of the sizes it equals (each literal
    // rewritten to that size's value in the reduced instance). Whatever the
    // literal stands for, one of the runs is the plan it means, reduced; a
    // difference in every run is a difference of the plan.
    reduce::Result reread;
    std::string reread_note;  // why that search did not decide, for an UNKNOWN
    const ir::Case* reread_case = nullptr;
    auto search_reread = [&]() -> std::optional<Verdict> {
      reduce::Options lo = ro;
      lo.refute = lo.reread_literals = true;
      reread = reduce::reduce_case(c, lo);
      if (!reread.changed || reread.readings.empty() || reread.applied == loose.applied)
        return std::nullopt;
      // Equal literals with the same readings (a factor 1/8 on every
      // gradient) are read alike: one choice for all of them.
      struct Group {
        const reduce::Reading* first;
        std::vector<const reduce::Reading*> members;
      };
      std::vector<Group> groups;
      for (const auto& rd : reread.readings) {
        auto same = [&](const Group& g) {
          if (g.first->value != rd.value || g.first->as.size() != rd.as.size()) return false;
          for (size_t k = 0; k < rd.as.size(); ++k)
            if (g.first->as[k].second != rd.as[k].second) return false;
          return true;
        };
        auto it = std::find_if(groups.begin(), groups.end(), same);
        if (it == groups.end()) it = groups.insert(groups.end(), Group{&rd, {}});
        it->members.push_back(&rd);
      }
      size_t runs = 1;
      for (const auto& g : groups) {
        runs *= g.first->as.size() + 1;
        if (runs > kMaxReadings) {
          reread_note = "literals equal to sizes as given have more than " +
                        std::to_string(kMaxReadings) +
                        " combinations of readings; the instance reduced past them was not run";
          return std::nullopt;
        }
      }
      progress_start(
          opt.progress,
          "running an instance reduced past literals equal to sizes, under each reading");
      Verdict first = Checker(reread.reduced, file, opt, true).refute_only();
      if (first.kind != VerdictKind::mismatch) {
        reread_note =
            "an instance reduced past literals equal to sizes as given showed no difference with "
            "them as written";
        return std::nullopt;
      }
      for (size_t k = 1; k < runs; ++k) {
        ir::Case alt = reread.reduced;
        size_t code = k;
        for (const auto& g : groups) {
          const size_t n = g.first->as.size() + 1, pick = code % n;
          code /= n;
          if (pick > 0)
            for (const auto* rd : g.members)
              if (!reduce::set_literal(alt, *rd, g.first->as[pick - 1].second)) return std::nullopt;
        }
        if (Checker(alt, file, opt, true).refute_only().kind != VerdictKind::mismatch) {
          reread_note =
              "an instance reduced past literals equal to sizes as given differs with them as "
              "written but not under every reading of them as sizes (one may be what they stand "
              "for)";
          return std::nullopt;
        }
      }
      std::string readings;
      for (const auto& g : groups) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", g.first->value);
        const reduce::Reading& rd = *g.first;
        readings +=
            std::string(readings.empty() ? "" : "; ") + buf + " in " +
            (rd.program.empty() ? "the spec" : "program " + rd.program) + " (" + rd.result + "." +
            rd.attr +
            (g.members.size() > 1 ? " and " + std::to_string(g.members.size() - 1) + " more" : "") +
            ") as written";
        for (const auto& [text, val] : rd.as) readings += ", as " + text;
      }
      const std::string applied = comma_list(reread.applied);
      first.cex->found_by +=
          "; found on an instance reduced past literals that equal a size as given (" + applied +
          "), shown as written and under each reading of them (" + readings + "; " +
          std::to_string(runs) + " runs, every one differs)";
      reread_case = &reread.reduced;
      return first;
    };
    // Literals of the plan that may stand for c * q^k at the given sizes: the
    // reduced instance `k` (of reduction `u`) is run under every combination
    // of their readings; why its difference is in doubt, if one shows none.
    bool given_ran = false;  // literal_doubt ran the plan as given, and it showed no difference
    auto literal_doubt = [&](const reduce::Result& u, const ir::Case& k) -> std::optional<std::string> {
      const std::vector<reduce::Reading> rds = reduce::power_readings(c, u);
      if (rds.empty()) return std::nullopt;
      // Equal literals are read alike (their readings are the same): one choice for all.
      std::map<double, std::vector<const reduce::Reading*>> groups;
      for (const auto& rd : rds) groups[rd.value].push_back(&rd);
      // More combinations than that, or an instance too large to run, and
      // the difference stands as it did before these readings were made.
      size_t runs = 1;
      for (const auto& [x, g] : groups)
        if ((runs *= g[0]->as.size() + 1) > kMaxReadings) return std::nullopt;
      if (rank_instructions_over(k, kCrossCheckRankInstructions)) return std::nullopt;
      // A plan small enough to run as given that differs there needs no reading.
      given_ran = false;
      if (!rank_instructions_over(c, kCrossCheckRankInstructions)) {
        Checker as_given(c, file, opt, true);
        if (as_given.refute_only().kind == VerdictKind::mismatch) return std::nullopt;
        given_ran = as_given.ran_numeric();
      }
      progress_start(opt.progress, "running the reduced instance with literals read at its sizes");
      for (size_t n = 1; n < runs; ++n) {
        ir::Case alt = k;
        size_t code = n;
        std::string read;
        for (const auto& [x, g] : groups) {
          const size_t m = g[0]->as.size() + 1, pick = code % m;
          code /= m;
          if (pick == 0) continue;
          for (const auto* rd : g)
            if (!reduce::set_literal(alt, *rd, rd->as[pick - 1].second)) return std::nullopt;
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.17g", x);
          read += std::string(read.empty() ? "" : ", ") + buf + " in program " + g[0]->program + " (" +
                  g[0]->result + "." + g[0]->attr + (g.size() > 1 ? " and " + std::to_string(g.size() - 1) + " more" : "") +
                  ") as " + g[0]->as[pick - 1].first;
        }
        if (Checker(alt, file, opt, true).refute_only().kind != VerdictKind::mismatch)
          return "it shows no difference with " + read +
                 " at the reduced sizes: the literal may stand for that size, which the reduction changed";
      }
      return std::nullopt;
    };
    Verdict v;
    StagedResult sr;
    double reduce_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - fold_attempt_s;
    // Literals read as indeterminates did not prove the plan, and the pinned
    // instance keeps the sizes they equal (the attention scale keeps head dim
    // and sequence at their published values, past any memory): a difference
    // is looked for first past those literals, under every reading of them.
    std::optional<Verdict> early;
    if (literals_unproved) {
      ir::Bindings at = target.plan.dims;
      if (target.spec)
        for (const auto& [k, x] : target.spec->dims) at.emplace(k, x);
      for (const auto& a : target.plan.mesh.axes) at[a.name] = a.size;
      if (symbolic_terms_upto(target, at, opt.max_terms, /*ranks=*/false) > opt.max_terms) {
        early = search_past_pins();
        if (!early) early = search_reread();
      }
    }
    if (!early && opt.stages && !opt.smt_all) {
      so.spec_types = r.changed ? &r.spec_types : &spec_types;
      sr = prove_by_stages(target, so);
    }
    std::optional<Verdict> zero_found = sr.proved ? zero_counts(sr, target) : std::nullopt;
    if (early) {
      v = std::move(*early);
    } else if (zero_found) {
      v = std::move(*zero_found);
    } else if (sr.proved) {
      v = staged_verdict(sr, target, opt);
    } else {
      Checker whole(target, file, opt, true, opt.stages, sr.failure ? &*sr.failure : nullptr);
      whole.before_proving(search_full_dims);
      v = whole.run();
      v.stage_note = opt.stages ? sr.reason : "";
      if (opt.stages && sr.failure) v.stage_difference = sr.failure->difference;
      v.whole_seconds = v.seconds;
    }
    if (v.kind == VerdictKind::unknown)
      if (auto nv = search_full_dims()) {
        nv->stage_note = v.stage_note;
        nv->stage_difference = v.stage_difference;
        nv->whole_seconds = v.whole_seconds + nv->seconds;
        v = std::move(*nv);
      }
    if (v.kind == VerdictKind::unknown)
      if (auto nv = search_past_pins()) {
        nv->stage_note = v.stage_note;
        nv->stage_difference = v.stage_difference;
        nv->whole_seconds = v.whole_seconds + nv->seconds;
        v = std::move(*nv);
      }
    if (v.kind == VerdictKind::unknown)
      if (auto nv = search_reread()) {
        nv->stage_note = v.stage_note;
        nv->stage_difference = v.stage_difference;
        nv->whole_seconds = v.whole_seconds + nv->seconds;
        v = std::move(*nv);
      }
    if (v.kind == VerdictKind::unknown && !reread_note.empty()) v.reason += "; " + reread_note;
    // Placements that cover a spec output as given can leave part of it
    // unplaced reduced (a row offset `$tp*(H/tp)` where `NH*D/tp` is meant,
    // equal as given): such an INVALID is the reduced instance's, not the
    // plan's. The sizes of that output and of the regions placed on it are
    // kept and the plan verified again. With every size the output's shape
    // and its placements' boxes read kept (an axis whose coordinate a box
    // reads, the count of a loop whose index it reads), the boxes are those of
    // the plan as given along everything they depend on: a gap left then is
    // the plan's, and the INVALID stands.
    if (v.kind == VerdictKind::invalid && !v.uncovered.empty() && r.changed) {
      const std::set<std::string> sizes = reduce::output_box_sizes(c, v.uncovered, r.spec_types);
      VerifyOptions again = opt;
      bool more = false;
      for (const auto& x : sizes)
        if ((c.plan.dims.count(x) || c.spec->dims.count(x) || c.plan.mesh.axis_index(x)) && !again.keep_sizes.count(x)) {
          again.keep_sizes[x] = "the instance reduced with it leaves part of spec output '" + v.uncovered +
                                "' unplaced (" + v.reason + ", reduced: " + comma_list(r.applied) + ")";
          more = true;
        }
      if (more) return verify_case(c, file, again);
      v.reason += " (in the instance reduced with " + comma_list(r.applied) +
                  ", every size of that output and of the boxes placed on it kept as given)";
      return v;
    }
    // A difference found on a reduced instance is concrete there, but a
    // literal that stands for a size as given (`1/12` for B/dp = 12, an lr
    // with 1/dp folded in, a coordinate written as a literal) differs from it
    // at the reduced sizes only. A plan small enough to run as given is
    // proved by stages as given before such a MISMATCH is reported; if every
    // stage proves, the plan is VERIFIED as given (no reduction needed) and
    // the difference was the reduction's. Otherwise the counterexample stands.
    if (v.kind == VerdictKind::mismatch && (r.changed || full_case || loose_case || reread_case) && opt.stages &&
        !opt.smt_all && !rank_instructions_over(c, kCrossCheckRankInstructions)) {
      progress_start(opt.progress, "proving the plan as given by stages");
      StageOptions go = so;
      go.spec_types = nullptr;
      StagedResult gsr = prove_by_stages(c, go);
      if (gsr.proved && gsr.zero_cancelled == 0) {
        // The first validation simulated the schedule only within its budget.
        d = ir::validate_case(c, file, ir::kScheduleBudget, opt.threads);
        if (!d.empty()) return invalid_verdict(d);
        Verdict gv = staged_verdict(gsr, c, opt);
        gv.verified_ranks = c.plan.mesh.num_ranks();
        const std::string applied =
            comma_list((reread_case ? reread : loose_case ? loose : full_case ? full : r).applied);
        gv.second_look = "the reduced instance (" + applied + ") differs at " + (v.cex ? v.cex->value : "?") +
                         ", but the plan as given proves by stages: a literal or index stands for a size that "
                         "the reduction changed, so the difference is the reduced instance's only";
        gv.validate_seconds = validate_s;
        gv.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return gv;
      }
      // The counterexample stands; say what the look at the plan as given
      // found, so that a reader knows which doubt is left (a stage that
      // ran out of memory settles nothing either way).
      v.second_look = "the plan as given, checked by stages in case a literal stands for a size the reduction "
                      "changed, does not prove there (" +
                      (gsr.zero_cancelled ? std::string("a count that can be 0 was cancelled")
                                          : gsr.reason.empty() ? std::string("a stage differs") : gsr.reason) +
                      "): the reduced instance's difference is reported";
    }
    // A reduced difference that a literal of another form may explain
    // (reduce/literal_readings.h: c * q^2 for a spec constant c, such as a
    // load-balancing coefficient 0.02/T^2 written as one number). The
    // reduced instance is run again with such literals read at its sizes; a
    // reading under which it shows no difference may be what the literal
    // means, so the difference is not the plan's for sure: UNKNOWN.
    if (v.kind == VerdictKind::mismatch && v.cex && (r.changed || full_case || loose_case || reread_case)) {
      const reduce::Result& u = reread_case ? reread : loose_case ? loose : full_case ? full : r;
      const ir::Case& k = reread_case ? *reread_case : loose_case ? *loose_case : full_case ? *full_case : target;
      if (auto why = literal_doubt(u, k)) {
        Verdict nv = v;
        nv.kind = VerdictKind::unknown;
        nv.reason = "the reduced instance (" + comma_list(u.applied) + ") differs at " + v.cex->value + ", but " + *why +
                    (given_ran ? "; the plan as given shows no difference at the screening points either"
                               : "; the plan is too large to be proved or run as given, `--no-reduce` checks it so");
        nv.cex.reset();
        nv.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return nv;
      }
    }
    if (r.changed && v.kind == VerdictKind::verified) {
      sr.graph.reset();
      const auto l0 = std::chrono::steady_clock::now();
      if (auto nv = guarded_look(v, c, r.applied, nullptr)) return *nv;
      v.second_look = look_note;
      v.second_look_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - l0).count();
    }
    if (schedule_deferred && v.kind != VerdictKind::mismatch) {
      progress_start(opt.progress, "simulating the schedule");
      d = ir::validate_case(c, file, ir::kScheduleBudget, opt.threads);
      if (!d.empty()) return invalid_verdict(d);
    }
    const reduce::Result* used = reread_case  ? &reread
                                 : loose_case ? &loose
                                 : full_case  ? &full
                                              : &r;
    const ir::Case* checked = reread_case  ? reread_case
                              : loose_case ? loose_case
                              : full_case  ? full_case
                                           : &target;
    const reduce::StageGraph* graph =
        reread_case || loose_case || full_case ? nullptr : sr.graph.get();
    v.reduce_seconds = reduce_s;
    v.validate_seconds = validate_s;
    v.fold_seconds = fold_attempt_s;
    v.stage_build_seconds = sr.build_seconds;
    v.stage_prove_seconds = sr.prove_seconds;
    v.reductions = used->applied;
    v.kept = used->kept;
    if (!fold_note.empty()) v.kept.push_back(fold_note);
    v.verified_ranks = checked->plan.mesh.num_ranks();
    bool mesh_changed = false;
    for (const auto& m : used->axes) mesh_changed |= m.from != m.to;
    if (v.cex && v.cex->rank_id >= 0)
      add_lineage(*v.cex, *checked, graph, opt.seed, [&](int64_t rk) {
        return mesh_changed ? used->original_rank_str(c.plan.mesh, rk) : checked->plan.mesh.rank_str(rk);
      });
    if (v.cex && v.cex->rank_id >= 0) {
      // Ranks as numbers and coordinates of the case as given, for reports.
      auto given = [&](int64_t rk, int64_t& out, std::map<std::string, int64_t>& coords) {
        out = mesh_changed ? used->original_rank(c.plan.mesh, rk) : rk;
        if (out < 0 || out >= c.plan.mesh.num_ranks()) {
          out = -1;
          return;
        }
        const ir::Coord co = c.plan.mesh.coord_of(out);
        coords.clear();
        for (size_t k = 0; k < co.size(); ++k) coords[c.plan.mesh.axes[k].name] = co[k];
      };
      given(v.cex->rank_id, v.cex->given_rank, v.cex->coords);
      for (auto& st : v.cex->lineage)
        if (st.rank >= 0) given(st.rank, st.given_rank, st.coords);
    }
    if (mesh_changed && v.cex && v.cex->rank_id >= 0) {
      std::string tail = v.cex->rank.substr(v.cex->rank.find(')') + 1);
      v.cex->rank = used->original_rank_str(c.plan.mesh, v.cex->rank_id) + tail + " [reduced instance: " +
                    checked->plan.mesh.rank_str(v.cex->rank_id) + "]";
    }
    v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return v;
  } catch (const ir::InvalidInput& e) {
    Verdict v;
    v.kind = VerdictKind::invalid;
    v.reason = e.what();
    v.diags.push_back(e.diag());
    return v;
  } catch (const std::bad_alloc&) {
    Verdict v;
    v.kind = VerdictKind::unknown;
    v.solver = opt.solver;
    v.reason =
        "ran out of memory while checking it at these sizes (nothing could be concluded): tensors the reduction "
        "could not shrink (see what it kept; an imported module's sizes reduce only where they could be given "
        "symbols): try smaller sizes";
    return v;
  }
}

}  // namespace parity::verify
