// Verifier behaviour that the corpus files cannot show alone: solver timeouts,
// solver agreement, and the fast paths.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "corpus/builder.h"
#include "corpus/generator.h"
#include "frontend/proto/case_io.h"
#include "ir/interp.h"
#include "verify/check.h"
#include "tests/lib/corpus_path.h"

namespace parity {
namespace {

using corpus::f32;

// y = (sum a)(sum b)...(one sum per factor) in the spec; the plan computes the
// fully expanded polynomial through nested outer products, so only
// distributivity (expansion or the solver) shows they are equal.
// With `wrong_twin`, a second output z = a0 that the plan computes as 2*a0,
// placed after y.
ir::Case expanded_product(int n, int factors, double plan_factor = 1.0, bool wrong_twin = false) {
  corpus::SpecBuilder sb("product_of_sums");
  sb.dim("N", n);
  auto& g = sb.graph();
  std::vector<std::string> ins;
  for (int f = 0; f < factors; ++f) ins.push_back(sb.input("a" + std::to_string(f), f32, {"N"}, ir::Role::data));
  std::string y = g.op("reduce_sum", {ins[0]}, {{"dims", corpus::ints({"0"})}});
  for (int f = 1; f < factors; ++f) y = g.op("mul", {y, g.op("reduce_sum", {ins[static_cast<size_t>(f)]}, {{"dims", corpus::ints({"0"})}})});
  g.let("y", "identity", {y});
  sb.output("y", ir::Role::loss);
  if (wrong_twin) {
    g.let("z", "scale", {ins[0]}, {{"factor", 1.0}});
    sb.output("z", ir::Role::other);
  }

  corpus::PlanBuilder pb("expanded");
  pb.axis("dp", 1).dim("N", n);
  auto& p = pb.program("all");
  std::string acc = p.input("a0", f32, {"N"});
  pb.replica("all", "a0", "a0");
  std::string shape = "N";
  for (int f = 1; f < factors; ++f) {
    std::string name = "a" + std::to_string(f);
    p.input(name, f32, {"N"});
    pb.replica("all", name, name);
    // outer product: [K,1] x [1,N] -> [K,N] -> flatten to [K*N]
    std::string col = p.op("reshape", {acc}, {{"shape", corpus::ints({shape, "1"})}});
    std::string row = p.op("reshape", {name}, {{"shape", corpus::ints({"1", "N"})}});
    std::string outer = p.op("matmul", {col, row});
    shape = "(" + shape + ")*N";
    acc = p.op("reshape", {outer}, {{"shape", corpus::ints({shape})}});
  }
  std::string total = p.op("reduce_sum", {acc}, {{"dims", corpus::ints({"0"})}});
  p.let("y", "scale", {total}, {{"factor", plan_factor}});
  p.output("y");
  pb.replica("all", "y", "y");
  if (wrong_twin) {
    p.let("z", "scale", {"a0"}, {{"factor", 2.0}});
    p.output("z");
    pb.replica("all", "z", "z");
  }
  return ir::Case{sb.build(), pb.build()};
}

TEST(Verify, DistributivityProvedByExpansion) {
  verify::VerifyOptions opt;
  auto v = verify::verify_case(expanded_product(3, 2), "t", opt);
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  EXPECT_EQ(v.by_expansion, 1u);
}

TEST(Verify, DistributivityProvedBySolvers) {
  for (const char* s : {"z3", "cvc5"}) {
    verify::VerifyOptions opt;
    opt.solver = s;
    opt.expand_budget = 0;
    auto v = verify::verify_case(expanded_product(3, 2), "t", opt);
    EXPECT_EQ(v.kind, verify::VerdictKind::verified) << s << ": " << v.reason;
    EXPECT_EQ(v.by_smt, 1u) << s;
  }
}

TEST(Verify, SolverTimeoutIsUnknown) {
  ir::Case c = expanded_product(6, 4);
  // Z3 does not finish in 1 ms; with `both`, one solver's timeout is enough.
  for (const char* s : {"z3", "both"}) {
    verify::VerifyOptions opt;
    opt.solver = s;
    opt.expand_budget = 0;
    opt.timeout_ms = 1;
    opt.reduce = false;  // shape reduction would shrink the product to an easy one
    auto v = verify::verify_case(c, "t", opt);
    EXPECT_EQ(v.kind, verify::VerdictKind::unknown) << s;
    EXPECT_EQ(verify::verdict_exit_code(v.kind), 3);
    EXPECT_NE(v.reason.find("timeout"), std::string::npos) << v.reason;
  }
  // cvc5's rewriter normalizes polynomials before the time limit applies, so it
  // proves this instance: a proof, never a guess.
  verify::VerifyOptions opt;
  opt.solver = "cvc5";
  opt.expand_budget = 0;
  opt.timeout_ms = 1;
  opt.reduce = false;
  auto v = verify::verify_case(c, "t", opt);
  EXPECT_NE(v.kind, verify::VerdictKind::mismatch);
  if (v.kind == verify::VerdictKind::verified) {
    EXPECT_EQ(v.by_smt, 1u);
  }
}

// The whole check has a time limit of its own: past it the obligations left
// are UNKNOWN, however many there are and whatever each solver call may take.
TEST(Verify, TimeLimitEndsTheCheckAsUnknown) {
  ir::Case c = expanded_product(6, 4);
  verify::VerifyOptions opt;
  opt.expand_budget = 0;
  opt.reduce = false;
  opt.time_limit_s = 1e-9;
  auto v = verify::verify_case(c, "t", opt);
  EXPECT_EQ(v.kind, verify::VerdictKind::unknown);
  EXPECT_NE(v.reason.find("time limit"), std::string::npos) << v.reason;
  EXPECT_EQ(v.by_smt, 0u);
  // Without the limit the same check is proved (by the solver).
  opt.time_limit_s = 0;
  opt.expand_budget = 200000;
  EXPECT_EQ(verify::verify_case(c, "t", opt).kind, verify::VerdictKind::verified);
}

// Every obligation is screened before any is expanded or sent to a solver:
// y (equal, but only the solver can tell with expansion off) comes first, z
// (numerically different) second, and no solver time is spent on y.
TEST(Verify, ScreeningRunsBeforeAnySolver) {
  verify::VerifyOptions opt;
  opt.expand_budget = 0;
  opt.reduce = false;
  opt.stages = false;
  auto v = verify::verify_case(expanded_product(6, 4, 1.0, true), "t", opt);
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
  ASSERT_TRUE(v.cex.has_value());
  EXPECT_EQ(v.cex->spec_value, "z");
  EXPECT_EQ(v.by_smt, 0u);
  EXPECT_EQ(v.unknown, 0u);
}

// Gradient clipping's min(1, max_norm / norm) takes one branch at every
// point of one magnitude. A plan whose clipping constant is 2 instead of 1
// differs only on the other branch; before each obligation downstream of it
// (every updated parameter) costs the solvers their timeout, it is screened
// at points of other magnitudes. Without the ordinary screening points (and
// so without the numeric run of the whole plan) that is what must find it.
TEST(Verify, ScreeningAtOtherMagnitudesFindsABugOnTheOtherBranchOfAThreshold) {
  corpus::GenOptions g;
  g.tp = 2;
  g.sp = true;
  g.layers = 2;
  ir::Case c = corpus::generate(g);
  bool mutated = false;
  for (auto& op : c.plan.programs[0].graph.ops)
    if (!op.results.empty() && op.results[0] == "clip.one") op.attrs["value"] = 2.0, mutated = true;
  ASSERT_TRUE(mutated);
  for (uint64_t seed : {1, 2, 3}) {
    verify::VerifyOptions opt;
    opt.random_points = 0;
    opt.seed = seed;
    opt.timeout_ms = 500;
    opt.time_limit_s = 10;
    auto v = verify::verify_case(c, "t", opt);
    ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << "seed " << seed << ": " << v.reason;
    EXPECT_NE(v.cex->found_by.find("scaled by"), std::string::npos) << v.cex->found_by;
    EXPECT_EQ(v.cex->spec_value.rfind("new.", 0), 0u) << v.cex->spec_value;
  }
}

// A relative difference of 1e-9 is under the screening tolerance but stable
// between double and extended precision: refuted at the screening points,
// before expansion or a solver.
TEST(Verify, SmallStableDifferenceIsRefutedByScreening) {
  verify::VerifyOptions opt;
  opt.reduce = false;
  auto v = verify::verify_case(expanded_product(3, 2, 1.0 + 1e-9), "t", opt);
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
  ASSERT_TRUE(v.cex.has_value());
  EXPECT_NE(v.cex->found_by.find("stable between double and extended precision"), std::string::npos)
      << v.cex->found_by;
  EXPECT_NE(v.cex->spec_num, v.cex->plan_num);
}

// One AdamW step on a [N] parameter in the spec and in a one-rank plan; the
// plan's beta1 may differ from the spec's.
ir::Case adamw_case(double spec_beta1, double plan_beta1) {
  corpus::SpecBuilder sb("adamw");
  sb.dim("N", 4);
  auto adamw = [](corpus::GraphBuilder& g, double beta1) {
    g.op_n("adamw", {"p", "g", "m", "v"},
           {{"lr", 0.01}, {"beta1", beta1}, {"beta2", 0.95}, {"eps", 1e-8}, {"weight_decay", 0.1}, {"step", 1}},
           {"new.p", "new.m", "new.v"});
  };
  sb.input("p", f32, {"N"}, ir::Role::param);
  sb.input("g", f32, {"N"}, ir::Role::data);
  sb.input("m", f32, {"N"}, ir::Role::opt_state);
  sb.input("v", f32, {"N"}, ir::Role::opt_state);
  adamw(sb.graph(), spec_beta1);
  sb.output("new.p", ir::Role::updated_param);
  sb.output("new.m", ir::Role::updated_state);
  sb.output("new.v", ir::Role::updated_state);
  corpus::PlanBuilder pb("adamw");
  pb.axis("dp", 1).dim("N", 4);
  auto& prog = pb.program("all");
  for (const char* x : {"p", "g", "m", "v"}) {
    prog.input(x, f32, {"N"});
    pb.replica("all", x, x);
  }
  adamw(prog, plan_beta1);
  for (const char* x : {"new.p", "new.m", "new.v"}) {
    prog.output(x);
    pb.replica("all", x, x);
  }
  return ir::Case{sb.build(), pb.build()};
}

// 1 - 0.9009 computed in double reads back as a rational with a 20-digit
// denominator; formed exactly in the term domain, the step proves (it was
// UNKNOWN before coefficients were exact past 64 bits), and a different beta1 is still refuted.
TEST(Verify, AdamwWithAFourDigitBetaProves) {
  verify::VerifyOptions opt;
  auto v = verify::verify_case(adamw_case(0.9009, 0.9009), "t", opt);
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  v = verify::verify_case(adamw_case(0.9009, 0.9008), "t", opt);
  EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
}

// y = x * f * f with f = 0.1 + 0.2 (a double whose simplest rational has a
// 17-digit denominator): the coefficient f^2 is past 64 bits, and exact. A
// plan with another factor is refuted; the same one verifies (it was UNKNOWN
// before coefficients were GMP rationals).
TEST(Verify, CoefficientsPast64BitsAreExact) {
  const double f = 0.1 + 0.2;
  auto make = [&](double plan_f) {
    corpus::SpecBuilder sb("scaled");
    sb.dim("N", 2);
    sb.input("x", f32, {"N"}, ir::Role::data);
    sb.graph().let("y", "scale", {sb.graph().op("scale", {"x"}, {{"factor", f}})}, {{"factor", f}});
    sb.output("y", ir::Role::loss);
    corpus::PlanBuilder pb("scaled");
    pb.axis("dp", 1).dim("N", 2);
    auto& p = pb.program("all");
    p.input("x", f32, {"N"});
    pb.replica("all", "x", "x");
    p.let("y", "scale", {p.op("scale", {"x"}, {{"factor", f}})}, {{"factor", plan_f}});
    p.output("y");
    pb.replica("all", "y", "y");
    return ir::Case{sb.build(), pb.build()};
  };
  verify::VerifyOptions opt;
  opt.reduce = false;
  auto v = verify::verify_case(make(f * 1.01), "t", opt);
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
  ASSERT_TRUE(v.cex.has_value());
  v = verify::verify_case(make(f), "t", opt);
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  // Off in the 17th digit of the factor: still a different coefficient.
  v = verify::verify_case(make(std::nextafter(f, 1.0)), "t", opt);
  EXPECT_NE(v.kind, verify::VerdictKind::verified) << v.reason;
}

TEST(Verify, WrongProductIsRefutedWithReproducedWitness) {
  ir::Case c = expanded_product(3, 2, 2.0);
  for (const char* s : {"z3", "cvc5"}) {
    verify::VerifyOptions opt;
    opt.solver = s;
    opt.smt_all = true;  // refute through the solver, not screening
    auto v = verify::verify_case(c, "t", opt);
    ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << s << ": " << v.reason;
    ASSERT_TRUE(v.cex.has_value());
    EXPECT_NE(v.cex->found_by.find(s), std::string::npos);
    EXPECT_NEAR(v.cex->plan_num, 2 * v.cex->spec_num, 1e-9 * (1 + std::fabs(v.cex->spec_num)));
  }
}

// The examples, the solver cases and the generator's cases (correct and with
// each injected bug) give the expected verdict with Z3 and with cvc5. The
// feature folders' regression cases are checked by their verdicts and by
// execution; sending all their obligations to Z3 takes minutes each (what
// canonical forms settle at once).
TEST(Verify, SolversAgreeOnCorpus) {
  namespace fs = std::filesystem;
  int checked = 0;
  const fs::path root = fs::path(PARITY_SOURCE_DIR) / "corpus" / "cases";
  for (const char* dir : {"examples", "demo", "solver", "generated", "injected-bugs"}) {
    for (const auto& e : fs::directory_iterator(root / dir)) {
      if (e.path().extension() != ".pbtxt" && e.path().extension() != ".gen") continue;
      std::ifstream f(e.path());
      std::string line, cmd;
      int want = -1;
      while (std::getline(f, line) && line.rfind("#", 0) == 0) {
        if (line.rfind("# expect-cmd: ", 0) == 0) cmd = line.substr(14);
        if (line.rfind("# expect-exit: ", 0) == 0) want = std::stoi(line.substr(15));
      }
      if (cmd != "verify" || (want != 0 && want != 1)) continue;
      const std::string path = test_corpus::readable(e.path());
      ir::Case c = frontend::read_case(path);
      int got[2];
      int k = 0;
      for (const char* s : {"z3", "cvc5"}) {
        verify::VerifyOptions opt;
        opt.solver = s;
        // Correct plans: every obligation not equal by canonical form goes to the
        // solver. Buggy plans: the solvers see what screening leaves (finding
        // models of large nonlinear terms is slow, and screening finds them).
        opt.smt_all = want == 0;
        opt.timeout_ms = 20000;
        got[k++] = verify::verdict_exit_code(verify::verify_case(c, path, opt).kind);
      }
      EXPECT_EQ(got[0], want) << path << " with z3";
      EXPECT_EQ(got[1], want) << path << " with cvc5";
      ++checked;
    }
  }
  EXPECT_GE(checked, 60);
}

// Writes the timeout case for the file-driven corpus when PARITY_REGEN is set.
TEST(Verify, RegenerateTimeoutCase) {
  if (!std::getenv("PARITY_REGEN")) GTEST_SKIP();
  std::string path = std::string(PARITY_SOURCE_DIR) + "/corpus/cases/solver/timeout.pbtxt";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::string text = frontend::write_case_string(expanded_product(6, 4), frontend::Format::text);
  std::ofstream(path) << "# A product of four sums against its 1296-term expansion, with expansion\n"
                         "# disabled and a 1 ms solver limit: the verdict must be UNKNOWN (exit 3).\n"
                         "# expect-cmd: verify --no-reduce --expand-budget 0 --timeout-ms 1\n"
                         "# expect-exit: 3\n"
                         "# expect-error: UNKNOWN\n"
                      << text;
}

// A plan nothing reduces and too large for any check here has its schedule
// simulated at the end instead of first; a deadlock is still INVALID.
TEST(Verify, ADeadlockInAPlanTooLargeToCheckIsStillInvalid) {
  ir::Case c = frontend::read_case(test_corpus::case_path("injected-bugs/1f1b_recv_first.pbtxt"));
  verify::VerifyOptions o;
  o.schedule_budget = 1;        // not simulated with the plan as given
  o.max_rank_instructions = 5;  // too large for a symbolic or numeric run
  verify::Verdict v = verify::verify_case(c, "t", o);
  ASSERT_EQ(v.kind, verify::VerdictKind::invalid) << v.reason;
  EXPECT_NE(v.reason.find("deadlock"), std::string::npos) << v.reason;
}

// ir::flat_size counts what ir::flatten unrolls, without unrolling it
// (guards that size plans before they are unrolled rely on it), and
// saturates at its cap.
TEST(Verify, FlatSizeCountsWhatFlattenUnrolls) {
  namespace fs = std::filesystem;
  int checked = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(PARITY_SOURCE_DIR) / "corpus" / "cases")) {
    if (e.path().extension() != ".pbtxt" && e.path().extension() != ".gen") continue;
    ir::Case c;
    try {
      c = frontend::read_case(test_corpus::readable(e.path()));
    } catch (const std::exception&) {
      continue;  // malformed on purpose
    }
    ir::Bindings b = c.plan.dims;
    if (c.spec) {
      for (const auto& [k, v] : c.spec->dims) b.emplace(k, v);
    }
    for (const auto& a : c.plan.mesh.axes) b[a.name] = a.size;
    std::vector<const ir::Graph*> graphs;
    if (c.spec) graphs.push_back(&c.spec->graph);
    for (const auto& p : c.plan.programs) graphs.push_back(&p.graph);
    for (const ir::Graph* g : graphs) {
      size_t n = 0;
      try {
        if (ir::flat_size(*g, b, 1'000'000) > 1'000'000) continue;
        n = ir::flatten(*g, b).size();
      } catch (const std::exception&) {
        continue;  // a count that does not evaluate
      }
      EXPECT_EQ(ir::flat_size(*g, b, SIZE_MAX), n) << e.path();
      if (n > 1) {
        EXPECT_EQ(ir::flat_size(*g, b, n - 2), n - 1) << e.path();
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 100);
}

}  // namespace
}  // namespace parity
