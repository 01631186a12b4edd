// The staged prover spread over threads: the same stages, obligations and
// verdicts as one thread; a bug is never proved, whichever thread meets it.
#include <gtest/gtest.h>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "reduce/stages.h"
#include "verify/check.h"

#include <algorithm>
#include <set>
#include <string>

using namespace parity;

namespace {

corpus::GenOptions plan() {
  corpus::GenOptions o;
  o.model = "llama3-8b";
  o.tp = 2;
  o.pp = 2;
  o.mb = 2;
  o.layers = 4;
  return o;
}

// A partial sum placed on the spec value its allreduce computes is a seed of
// that stage (the allreduce reads it) and an obligation member (it is computed
// there too). Its second entry in the key must name the position it already
// has: keys number values by the order of their entries, and an unmarked
// second entry would shift every later number, so one key could stand for
// two stages that read different values.
TEST(StageKeys, AValueSeededAndComputedInOneStageIsNamedNotRenumbered) {
  corpus::GenOptions o = plan();
  o.dp = 1;
  ir::Case c = corpus::generate(o);
  reduce::StageGraph g(c, 1);
  size_t both = 0;
  for (const auto& st : g.stages()) {
    std::set<int32_t> seeds(st.plan_inputs.begin(), st.plan_inputs.end());
    for (int32_t id : st.plan_nodes) {
      if (!seeds.count(id)) continue;
      ++both;
      // Its position among the seeds, as the key's reference.
      size_t pos = 0;
      while (st.plan_inputs[pos] != id) ++pos;
      EXPECT_NE(st.key->find("|N" + std::to_string(pos) + ":"), std::string::npos)
          << st.spec_value << ": " << st.key->substr(0, 400);
    }
  }
  EXPECT_GT(both, 0u) << "the case has no stage where a seed is also computed";
}

// Region key text is remembered by region class and coordinates; the
// other tensor-parallel shard of one weight (offsets swapped) is another
// class, and its stage keys apart from the original's.
TEST(StageKeys, TheOtherShardOfAWeightKeysApart) {
  ir::Case a = corpus::generate(plan());
  ir::Case b = a;
  const std::string target = "new.l0.wq";  // the updated weight: its stage's obligation
  bool swapped = false;
  for (auto& pl : b.plan.placements) {
    if (pl.spec_value != target) continue;
    for (auto& rg : pl.region)
      if (rg.offset.str().find("$tp") != std::string::npos) {
        rg.offset = rg.size * (ir::DimExpr(1) - ir::DimExpr::sym("$tp"));
        swapped = true;
      }
  }
  ASSERT_TRUE(swapped) << "no tensor-parallel region on " << target;
  auto key_of = [&](const ir::Case& c) {
    reduce::StageGraph g(c, 1);
    for (const auto& st : g.stages())
      if (st.spec_value == target) return *st.key;
    return std::string();
  };
  const std::string ka = key_of(a), kb = key_of(b);
  ASSERT_FALSE(ka.empty());
  EXPECT_NE(ka, kb);
  EXPECT_EQ(key_of(a), ka);  // and the first again, after the second
}

TEST(StagedThreads, SameResultOnOneAndFourThreads) {
  ir::Case c = corpus::generate(plan());
  verify::VerifyOptions one, four;
  one.threads = 1;
  four.threads = 4;
  auto a = verify::verify_case(c, "t", one);
  auto b = verify::verify_case(c, "t", four);
  ASSERT_EQ(a.kind, verify::VerdictKind::verified) << a.stage_note;
  ASSERT_EQ(b.kind, verify::VerdictKind::verified) << b.stage_note;
  EXPECT_EQ(a.stages, b.stages);
  EXPECT_EQ(a.unique_stages, b.unique_stages);
  EXPECT_EQ(a.obligations, b.obligations);
  ASSERT_EQ(a.stage_list.size(), b.stage_list.size());
  for (size_t k = 0; k < a.stage_list.size(); ++k) {
    EXPECT_EQ(a.stage_list[k].hash, b.stage_list[k].hash);
    EXPECT_EQ(a.stage_list[k].obligations, b.stage_list[k].obligations);
  }
}

TEST(StagedThreads, BugsAreNeverProvedOnAnyThreadCount) {
  for (const char* bug : {"missing-allreduce@layer=3", "accumulator-reset@mb=1", "constant-changed"}) {
    ir::Case c = corpus::generate(plan());
    corpus::inject_bug(c, bug);
    for (unsigned t : {1u, 2u, 4u}) {
      verify::VerifyOptions o;
      o.threads = t;
      auto v = verify::verify_case(c, "t", o);
      EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << bug << " on " << t << " threads";
      EXPECT_TRUE(v.stage_list.empty());
      EXPECT_FALSE(v.stage_note.empty());
    }
  }
}

// Stages run largest first, but a failure is reported as the first failing
// stage in first-met order: the same on every thread count.
TEST(StagedThreads, TheFailureReportedIsTheFirstInOrderOnAnyThreadCount) {
  // Each pair fails two distinct stages: an early one in a layer, and the
  // gradient norm's, the largest, which now runs first.
  for (const char* bug : {"constant-changed", "missing-allreduce"}) {
    ir::Case c = corpus::generate(plan());
    corpus::inject_bug(c, bug);
    corpus::inject_bug(c, "pow-exponent");
    std::string first;
    for (unsigned t : {1u, 2u, 4u}) {
      verify::VerifyOptions o;
      o.threads = t;
      auto v = verify::verify_case(c, "t", o);
      ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << bug << " on " << t << " threads";
      ASSERT_FALSE(v.stage_note.empty());
      if (first.empty()) first = v.stage_note;
      EXPECT_EQ(v.stage_note, first) << bug << " on " << t << " threads";
      EXPECT_EQ(v.stage_note.find("grad_norm"), std::string::npos) << v.stage_note;
    }
  }
}

}  // namespace

namespace {

// Placements kept only on program inputs and spec outputs: every stage would
// re-run most of the plan. Stage building (spread over threads) stops with a
// reason, and the whole-plan check still settles the case.
TEST(StagedThreads, TooSparsePlacementsFallBackToTheWholeCheck) {
  corpus::GenOptions o = plan();
  o.pp = 1;
  o.mb = 1;
  o.layers = 6;
  ir::Case c = corpus::generate(o);
  std::set<std::string> outputs(c.spec->graph.outputs.begin(), c.spec->graph.outputs.end());
  std::vector<ir::Placement> kept;
  for (const auto& pl : c.plan.placements) {
    const ir::Program* prog = c.plan.program(pl.program);
    bool input = std::find(prog->graph.inputs.begin(), prog->graph.inputs.end(), pl.value) != prog->graph.inputs.end();
    if (input || outputs.count(pl.spec_value)) kept.push_back(pl);
  }
  ASSERT_LT(kept.size(), c.plan.placements.size());
  c.plan.placements = kept;
  verify::VerifyOptions opt;
  opt.threads = 2;
  auto v = verify::verify_case(c, "t", opt);
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  EXPECT_EQ(v.stages, 0u);
  EXPECT_NE(v.stage_note.find("too sparse"), std::string::npos) << v.stage_note;
}

}  // namespace

// A plan past the size limit is not laid out: the graph stops after counting
// its rank-instructions (a 126-layer plan kept at 8192 ranks would need
// over 100 million nodes), and the staged prover says why.
TEST(StagedLimits, APlanPastTheLimitIsCountedNotLaidOut) {
  corpus::GenOptions g;
  g.model = "llama3-8b";
  g.dp = 2;
  g.tp = 2;
  g.layers = 1;
  ir::Case c = corpus::generate(g);
  reduce::StageGraph full(c, 1);
  ASSERT_GT(full.rank_instructions(), 10u);
  ASSERT_FALSE(full.stages().empty());
  reduce::StageGraph small(c, 1, nullptr, 10);
  EXPECT_EQ(small.rank_instructions(), full.rank_instructions());
  EXPECT_TRUE(small.stages().empty());
  EXPECT_LT(small.nodes().size(), full.nodes().size() / 2);
  verify::StageOptions so;
  so.max_rank_instructions = 10;
  auto r = verify::prove_by_stages(c, so);
  EXPECT_FALSE(r.proved);
  EXPECT_NE(r.reason.find("too many rank-instructions for stages"), std::string::npos) << r.reason;
}
