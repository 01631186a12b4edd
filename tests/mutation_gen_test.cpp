// Random single mutations of generated plans (every parallelism the generator
// has: dp, tp, sp, cp, ep, pp with its three schedules, ZeRO 1-3; ops on
// every rank of a program or on one rank, and placements), checked
// against numeric execution: a mutant whose numbers differ from the spec in
// f64 must never be VERIFIED. PARITY_MUTANTS sets how many mutants a config
// gets (default 6; a longer campaign: PARITY_MUTANTS=200), PARITY_MUTANTS_SEED
// another draw, PARITY_MUTANTS_MARKS=io|forward fewer placed intermediates,
// PARITY_MUTANTS_VERBOSE=1 a line per mutant.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "exec/compare.h"
#include "exec/inputs.h"
#include "exec/runner.h"
#include "frontend/proto/case_io.h"
#include "ir/validate.h"
#include "tests/lib/mutation_sites.h"
#include "verify/check.h"

namespace parity {
namespace {

using ir::Op;

using mutation::collect;
using mutation::graph_of;
using mutation::Site;

template <class T>
const T* attr_as(const Op& op, const char* name) {
  const ir::Attr* a = op.attr(name);
  return a ? std::get_if<T>(a) : nullptr;
}

// A 0/1 integer attribute.
const ir::DimExpr* flag(const Op& op, const char* name) {
  const auto* e = attr_as<ir::DimExpr>(op, name);
  return e && e->is_const() && (e->const_value() == 0 || e->const_value() == 1) ? e : nullptr;
}

// One random mutation at `s`: the operators of real framework bugs (a
// collective dropped, doubled, over another axis or with another reduction; a
// constant, offset, peer or tag changed; an operand swapped or replaced by
// another value of its type). Returns its name, or "" when none applies.
std::string mutate(ir::Case& c, const Site& s, std::mt19937_64& rng, const ir::TypeMap& tm) {
  ir::Graph* g = graph_of(c.plan, s);
  Op& op = g->ops[s.path.back()];
  if (!op.regions.empty()) return "";
  std::vector<std::string> choices;
  const bool coll = op.attr("axes") || op.attr("groups") || op.kind == "grad_allreduce";
  if (coll)
    choices.insert(choices.end(), {"drop_collective", "duplicate_collective", "retarget_axis"});
  if (op.attr("reduce")) choices.push_back("change_reduce");
  for (const char* k : {"factor", "value", "exponent", "eps"})
    if (attr_as<double>(op, k)) choices.push_back(std::string("constant:") + k);
  if (op.operands.size() == 2 && !coll) choices.push_back("swap_operands");
  if (attr_as<ir::DimExpr>(op, "offset")) choices.push_back("shift_offset");
  if (op.attr("peer")) choices.push_back("change_peer");
  if (op.attr("tag")) choices.push_back("change_tag");
  if (flag(op, "causal")) choices.push_back("flip_causal");
  if (flag(op, "transpose_a") || flag(op, "transpose_b")) choices.push_back("flip_transpose");
  if (!op.operands.empty() && op.kind != "send") choices.push_back("wrong_input");
  if (choices.empty()) return "";
  std::string m = choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng)];
  if (m == "drop_collective") {
    mutation::drop_collective(op);
  } else if (m == "duplicate_collective") {
    mutation::duplicate_collective(*g, op, s.path.back());
  } else if (m == "change_reduce") {
    const auto* cur = attr_as<std::string>(op, "reduce");
    op.attrs["reduce"] = std::string(cur && *cur == "sum" ? "avg" : "sum");
  } else if (m == "retarget_axis") {
    const char* key = op.kind == "grad_allreduce" ? "grad_axes" : "axes";
    const auto* axes = attr_as<ir::Strings>(op, key);
    if (!axes || axes->empty() || c.plan.mesh.axes.size() < 2) return "";
    ir::Strings a = *axes;
    for (const auto& ax : c.plan.mesh.axes)
      if (std::find(a.begin(), a.end(), ax.name) == a.end()) {
        a[0] = ax.name;
        break;
      }
    if (a == *axes) return "";
    op.attrs[key] = a;
  } else if (m.rfind("constant:", 0) == 0) {
    std::string key = m.substr(9);
    double v = *attr_as<double>(op, key.c_str());
    op.attrs[key] = v == 0 ? 0.5 : v * 2;
  } else if (m == "swap_operands") {
    if (op.operands[0] == op.operands[1]) return "";
    std::swap(op.operands[0], op.operands[1]);
  } else if (m == "shift_offset") {
    op.attrs["offset"] = *attr_as<ir::DimExpr>(op, "offset") + ir::DimExpr(1);
  } else if (m == "change_peer") {
    auto peer = std::get<ir::Coords>(*op.attr("peer"));
    for (auto& [axis, e] : peer) e = e + ir::DimExpr(1);
    op.attrs["peer"] = peer;
  } else if (m == "change_tag") {
    op.attrs["tag"] = std::get<ir::DimExpr>(*op.attr("tag")) + ir::DimExpr(1);
  } else if (m == "flip_causal") {
    op.attrs["causal"] = ir::DimExpr(1 - flag(op, "causal")->const_value());
  } else if (m == "flip_transpose") {
    const char* key = flag(op, "transpose_a") ? "transpose_a" : "transpose_b";
    op.attrs[key] = ir::DimExpr(1 - flag(op, key)->const_value());
  } else if (m == "wrong_input") {
    // Another value of the same type defined before this op (a multi-use bug).
    size_t k = std::uniform_int_distribution<size_t>(0, op.operands.size() - 1)(rng);
    auto want = tm.find(op.operands[k]);
    if (want == tm.end()) return "";
    std::vector<std::string> cands;
    for (const auto& in : g->inputs)
      if (in != op.operands[k] && tm.count(in) && tm.at(in).str() == want->second.str())
        cands.push_back(in);
    for (size_t i = 0; i < s.path.back(); ++i)
      for (const auto& r : g->ops[i].results)
        if (r != op.operands[k] && tm.count(r) && tm.at(r).str() == want->second.str())
          cands.push_back(r);
    if (cands.empty()) return "";
    op.operands[k] = cands[std::uniform_int_distribution<size_t>(0, cands.size() - 1)(rng)];
  }
  return m;
}

// Points a random placement at another spec value of the same type (a
// region of l1.wq claimed as the same region of l0.wq): stage keys,
// obligations and the numeric run must all read the spec value it names.
std::string retarget_placement(ir::Case& c, std::mt19937_64& rng, const ir::TypeMap& spec_types) {
  auto& pls = c.plan.placements;
  ir::Placement& p = pls[std::uniform_int_distribution<size_t>(0, pls.size() - 1)(rng)];
  auto self = spec_types.find(p.spec_value);
  if (self == spec_types.end()) return "";
  std::vector<std::string> same;
  for (const auto& [name, t] : spec_types)
    if (name != p.spec_value && t.str() == self->second.str()) same.push_back(name);
  if (same.empty()) return "";
  std::string to = same[std::uniform_int_distribution<size_t>(0, same.size() - 1)(rng)];
  std::string m =
      "retarget_placement " + p.program + "." + p.value + ": " + p.spec_value + " -> " + to;
  p.spec_value = to;
  return m;
}

// f64 numbers of the plan against the spec's; nullopt when the plan cannot run.
std::optional<bool> numerically_differs(const ir::Case& c, uint64_t seed) {
  exec::RunOptions o;
  o.dtype = exec::DType::f64;
  o.timeout_s = 5;
  try {
    exec::Values in = exec::make_inputs(*c.spec, seed, o.dtype);
    exec::PlanRun run = exec::run_plan(c, in, o);
    exec::Values spec = exec::run_spec(c, in, o);
    exec::Values control = exec::run_spec(c, in, exec::control_options(o));
    exec::Values perturbed = exec::run_spec(c, in, exec::perturbed_options(o));
    return !exec::compare(*c.spec, exec::assemble(c.plan, run.values), spec, control, o.dtype, {},
                          &perturbed)
                .match;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

corpus::GenOptions config(const std::string& model, int64_t dp, int64_t tp, int64_t pp,
                          int64_t mb) {
  corpus::GenOptions o;
  o.model = model;
  o.dp = dp, o.tp = tp, o.pp = pp, o.mb = mb;
  o.layers = std::max<int64_t>(2, pp);
  return o;
}

std::vector<corpus::GenOptions> configs() {
  std::vector<corpus::GenOptions> out;
  out.push_back(config("llama3-8b", 2, 2, 1, 2));
  {
    auto o = config("llama3-8b", 1, 2, 1, 1);
    o.sp = true;
    out.push_back(o);
  }
  {
    auto o = config("llama3-8b", 1, 1, 1, 1);
    o.cp = 2;
    out.push_back(o);
  }
  {
    auto o = config("llama3-8b", 1, 1, 1, 1);
    o.cp = 2;
    o.cp_balanced = true;
    out.push_back(o);
  }
  out.push_back(config("llama3-8b", 1, 1, 2, 2));
  {
    auto o = config("llama3-8b", 1, 1, 2, 2);
    o.schedule = "1f1b";
    out.push_back(o);
  }
  for (int z : {1, 2, 3}) {
    auto o = config("llama3-8b", 2, 1, 1, 2);
    o.zero = z;
    out.push_back(o);
  }
  {
    auto o = config("deepseek-v3-16b", 2, 1, 1, 1);
    o.ep = 2;
    out.push_back(o);
  }
  out.push_back(config("deepseek-v3-16b", 1, 2, 1, 1));
  {
    auto o = config("llama3-8b", 1, 1, 2, 2);
    o.schedule = "interleaved";
    o.vpp = 2;
    o.layers = 4;
    out.push_back(o);
  }
  out.push_back(config("gpt-small", 1, 1, 2, 2));  // tied embedding and head on two stages
  out.push_back(config("llama3-8b", 2, 2, 2, 2));
  out.push_back(config("llama3-8b", 4, 2, 1, 2));  // dp reduced 4 -> 2
  return out;
}

TEST(MutationGen, NoNumericallyWrongMutantOfAGeneratedPlanIsVerified) {
  int per_config = 6;
  if (const char* e = std::getenv("PARITY_MUTANTS")) per_config = std::atoi(e);
  uint64_t seed = 2026;
  if (const char* e = std::getenv("PARITY_MUTANTS_SEED")) seed = std::strtoull(e, nullptr, 10);
  std::mt19937_64 rng(seed);
  verify::VerifyOptions opt;
  opt.threads = 1;
  // A mutant's obligations that the solvers cannot decide quickly are UNKNOWN,
  // which is allowed; only VERIFIED is checked against the numbers.
  opt.timeout_ms = 2000;
  opt.time_limit_s = 20;
  const bool verbose = std::getenv("PARITY_MUTANTS_VERBOSE") != nullptr;
  std::map<std::string, int> tally;
  for (auto gen : configs()) {
    // PARITY_MUTANTS_MARKS=io: placements on inputs and outputs only, so
    // stages and obligations span whole layers.
    if (const char* e = std::getenv("PARITY_MUTANTS_MARKS")) gen.marks = e;
    const ir::Case base = corpus::generate(gen);
    std::map<std::string, ir::TypeMap> types;
    ir::DiagList d0;
    ir::validate_plan(base.plan, &*base.spec, "", d0, &types);
    ASSERT_TRUE(d0.empty()) << corpus::describe(gen);
    ir::TypeMap spec_types;
    ir::validate_spec(*base.spec, "", d0, &spec_types);
    std::vector<Site> sites;
    for (size_t p = 0; p < base.plan.programs.size(); ++p)
      collect(base.plan.programs[p].graph, p, {}, sites);
    int made = 0;
    for (int tries = 0; made < per_config && tries < 50 * per_config; ++tries) {
      ir::Case c = base;
      Site s = sites[std::uniform_int_distribution<size_t>(0, sites.size() - 1)(rng)];
      std::string m, where, program = c.plan.programs[s.program].name, one_rank;
      if (tries % 5 == 2 && c.plan.mesh.num_ranks() > 1) {
        // A bug on one rank only: that rank runs its own copy of the program
        // (MPMD), and the mesh reduction must keep it or not reduce.
        const int64_t r =
            std::uniform_int_distribution<int64_t>(0, c.plan.mesh.num_ranks() - 1)(rng);
        if (!c.plan.program_of(r)) continue;
        program = c.plan.program_of(r)->name;
        const std::string mine = corpus::isolate_rank(c.plan, r);
        std::vector<Site> own;
        for (size_t p = 0; p < c.plan.programs.size(); ++p)
          if (c.plan.programs[p].name == mine) collect(c.plan.programs[p].graph, p, {}, own);
        s = own[std::uniform_int_distribution<size_t>(0, own.size() - 1)(rng)];
        one_rank = " (rank " + std::to_string(r) + " only)";
      }
      if (tries % 5 == 4) {
        // A placement pointed at another spec value: stage keys, obligations
        // and the numeric run must all read the spec value it names.
        m = retarget_placement(c, rng, spec_types);
        if (m.empty()) continue;
        where = corpus::describe(gen) + ": " + m;
      } else {
        m = mutate(c, s, rng, types.at(program));
        if (m.empty()) continue;
        const ir::Graph* g = graph_of(c.plan, s);
        where = corpus::describe(gen) + ": " + m + " at " + c.plan.programs[s.program].name + " " +
                g->ops[std::min(s.path.back(), g->ops.size() - 1)].label() + one_rank;
      }
      ++made;
      opt.seed = static_cast<uint64_t>(tries) + 1;
      verify::Verdict v = verify::verify_case(c, "mutant", opt);
      if (v.kind == verify::VerdictKind::invalid) {
        if (verbose) std::printf("%s: INVALID\n", where.c_str());
        ++tally["invalid"];
        continue;
      }
      auto t0 = std::chrono::steady_clock::now();
      auto diff = numerically_differs(c, 7 + static_cast<uint64_t>(tries));
      const double run_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!diff) {
        ++tally["does not run"];
        EXPECT_NE(v.kind, verify::VerdictKind::verified) << where << ": VERIFIED but does not run";
        continue;
      }
      std::string k =
          std::string(verify::verdict_name(v.kind)) + (*diff ? " / differs" : " / same");
      if (verbose)
        std::printf("%s: %s (verify %.1f s, run %.1f s)\n", where.c_str(), k.c_str(), v.seconds,
                    run_s);
      ++tally[k];
      EXPECT_FALSE(*diff && v.kind == verify::VerdictKind::verified)
          << where << ": numerically wrong but VERIFIED (input seed " << 7 + tries << ")";
      // PARITY_MUTANTS_DUMP=DIR keeps every mutant whose verdict and numbers
      // disagree, to replay with `parity verify` and `parity run --compare`.
      if (*diff != (v.kind == verify::VerdictKind::mismatch))
        if (const char* dir = std::getenv("PARITY_MUTANTS_DUMP"))
          frontend::write_case(c, std::string(dir) + "/mutant_" + std::to_string(tries) + ".pbtxt");
      if (*diff && v.kind == verify::VerdictKind::unknown)
        std::printf("UNKNOWN on a wrong mutant: %s: %s\n", where.c_str(), v.reason.c_str());
      if (!*diff && v.kind == verify::VerdictKind::mismatch)
        std::printf("MISMATCH where f64 agrees: %s\n", where.c_str());
    }
  }
  std::string line;
  for (const auto& [k, n] : tally) line += " " + k + "=" + std::to_string(n);
  std::printf("mutants:%s\n", line.c_str());
}

}  // namespace
}  // namespace parity
