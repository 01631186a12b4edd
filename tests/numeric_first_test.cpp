// When a stage does not prove, a large plan is first run numerically: a
// divergence confirmed in extended precision is the counterexample (at the
// failing stage's element when it differs there), and no divergence hands the
// plan to the symbolic check, which may still prove it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "frontend/proto/case_io.h"
#include "reduce/reduce.h"
#include "reduce/stages.h"
#include "verify/check.h"
#include "tests/lib/corpus_path.h"

using namespace parity;

namespace {

verify::VerifyOptions numeric_always() {
  verify::VerifyOptions o;
  o.numeric_first_above = 0;
  return o;
}

TEST(NumericFirst, BugsAreRefutedNumericallyAtTheFailingStage) {
  corpus::GenOptions g;
  g.model = "llama3-8b";
  g.tp = 2;
  g.pp = 2;
  g.mb = 2;
  g.layers = 4;
  for (const char* bug : {"missing-allreduce@layer=2", "accumulator-reset@mb=1", "constant-changed@rank=1"}) {
    ir::Case c = corpus::generate(g);
    corpus::inject_bug(c, bug);
    auto v = verify::verify_case(c, "t", numeric_always());
    ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << bug;
    ASSERT_TRUE(v.cex) << bug;
    EXPECT_NE(v.cex->found_by.find("numeric evaluation of the plan up to this value"), std::string::npos)
        << v.cex->found_by;
    EXPECT_GT(std::fabs(v.cex->spec_num - v.cex->plan_num), 1e-6) << bug;
    // Running only up to the failing stage's value finds what the whole run finds.
    verify::VerifyOptions whole = numeric_always();
    whole.numeric_focus = false;
    auto w = verify::verify_case(c, "t", whole);
    ASSERT_TRUE(w.cex) << bug;
    EXPECT_NE(w.cex->found_by.find("numeric evaluation of the whole plan"), std::string::npos) << w.cex->found_by;
    EXPECT_EQ(w.cex->rank, v.cex->rank) << bug;
    EXPECT_EQ(w.cex->iter, v.cex->iter) << bug;
    EXPECT_EQ(w.cex->value, v.cex->value) << bug;
    EXPECT_EQ(w.cex->spec_index, v.cex->spec_index) << bug;
    EXPECT_EQ(w.cex->spec_num, v.cex->spec_num) << bug;
    EXPECT_EQ(w.cex->plan_num, v.cex->plan_num) << bug;
    EXPECT_FALSE(v.stage_note.empty());
    // The symbolic path reaches the same verdict.
    verify::VerifyOptions sym;
    sym.numeric_first_above = SIZE_MAX;
    EXPECT_EQ(verify::verify_case(c, "t", sym).kind, verify::VerdictKind::mismatch) << bug;
  }
}

// The failing stage's value is a partial sum over data-parallel ranks: the
// focused run waits for every rank of the sum, and finds what the whole run finds.
TEST(NumericFirst, AFocusedRunWaitsForEveryRankOfAPartialSum) {
  corpus::GenOptions g;
  g.model = "llama3-8b";
  g.dp = 2;
  g.tp = 2;
  g.pp = 2;
  g.mb = 2;
  g.layers = 2;
  ir::Case c = corpus::generate(g);
  corpus::inject_bug(c, "accumulator-reset@mb=1");
  auto v = verify::verify_case(c, "t", numeric_always());
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch);
  ASSERT_TRUE(v.cex);
  EXPECT_NE(v.cex->rank.find("summed over 2 ranks"), std::string::npos) << v.cex->rank;
  EXPECT_NE(v.cex->found_by.find("up to this value"), std::string::npos) << v.cex->found_by;
  verify::VerifyOptions whole = numeric_always();
  whole.numeric_focus = false;
  auto w = verify::verify_case(c, "t", whole);
  ASSERT_TRUE(w.cex);
  EXPECT_EQ(w.cex->rank, v.cex->rank);
  EXPECT_EQ(w.cex->spec_index, v.cex->spec_index);
  EXPECT_EQ(w.cex->spec_num, v.cex->spec_num);
  EXPECT_EQ(w.cex->plan_num, v.cex->plan_num);
}

// A literal 1/M (the loss averaged over microbatches twice) equals sizes at
// their reduced values everywhere, so no size shrinks and the plan is too
// large to check; an instance reduced past those coincidences (M, which the
// literal stands for, kept) shows the difference.
TEST(NumericFirst, AnInstanceReducedPastCoincidingLiteralsRefutesWhatIsTooLarge) {
  corpus::GenOptions g;
  g.model = "llama3-8b";
  g.dp = 8;
  g.mb = 4;
  g.layers = 1;
  ir::Case c = corpus::generate(g);
  corpus::inject_bug(c, "loss-scale-mb");
  reduce::Options ro;
  ro.refute = true;
  reduce::Result loose = reduce::reduce_case(c, ro);
  ASSERT_TRUE(loose.changed);
  EXPECT_FALSE(reduce::reduce_case(c).changed);
  const size_t orig = reduce::StageGraph(c, 1, nullptr, 0).rank_instructions();
  const size_t small = reduce::StageGraph(loose.reduced, 1, nullptr, 0).rank_instructions();
  ASSERT_GE(orig, 4 * small);
  verify::VerifyOptions o;
  o.max_rank_instructions = small - 1;  // the original is too large even for a numeric run
  auto v = verify::verify_case(c, "t", o);
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
  ASSERT_TRUE(v.cex);
  EXPECT_NE(v.cex->found_by.find("reduced further than the one checked"), std::string::npos) << v.cex->found_by;
  EXPECT_NE(v.cex->rank.find("reduced instance"), std::string::npos) << v.cex->rank;
  // The kept size is kept: M stays 4 in the instance the difference came from.
  for (const auto& a : loose.applied) EXPECT_EQ(a.find("dim M "), std::string::npos) << a;
  // A correct plan is never refuted there.
  ir::Case ok = corpus::generate(g);
  EXPECT_NE(verify::verify_case(ok, "t", o).kind, verify::VerdictKind::mismatch);
}

// Beyond the symbolic size limit (up to four times it) the numeric run still
// looks: a bug is a MISMATCH rather than UNKNOWN; a plan it cannot refute stays UNKNOWN.
TEST(NumericFirst, RefutesPlansTooLargeForTheSymbolicCheck) {
  corpus::GenOptions g;
  g.model = "llama3-8b";
  g.tp = 2;
  g.layers = 2;
  ir::Case bad = corpus::generate(g);
  corpus::inject_bug(bad, "missing-allreduce@layer=1");
  verify::VerifyOptions o = numeric_always();
  o.reduce = true;
  verify::Verdict probe = verify::verify_case(bad, "t", o);
  ASSERT_EQ(probe.kind, verify::VerdictKind::mismatch);
  // Limit the symbolic check to a little less than the plan needs.
  size_t limit = 0;
  for (size_t lim : {size_t{200}, size_t{500}, size_t{1000}, size_t{2000}, size_t{4000}}) {
    verify::VerifyOptions t = o;
    t.max_rank_instructions = lim;
    t.stages = false;
    if (verify::verify_case(corpus::generate(g), "t", t).kind == verify::VerdictKind::unknown) limit = lim;
  }
  ASSERT_GT(limit, 0u) << "some limit below the plan's size";
  o.max_rank_instructions = limit;
  verify::Verdict v = verify::verify_case(bad, "t", o);
  EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
  ir::Case balanced =
      frontend::read_case(test_corpus::case_path("generated/llama3_cp2_balanced_tp2_sp.pbtxt"));
  o.max_rank_instructions = 10;
  EXPECT_EQ(verify::verify_case(balanced, "t", o).kind, verify::VerdictKind::unknown);
  // A run that would need more memory than allowed is not started: UNKNOWN,
  // saying so, where it would have found the bug.
  o.max_rank_instructions = limit;
  o.numeric_run_bytes = 1000;
  v = verify::verify_case(bad, "t", o);
  EXPECT_EQ(v.kind, verify::VerdictKind::unknown);
  EXPECT_NE(v.reason.find("a numeric run would need"), std::string::npos) << v.reason;
}

TEST(NumericFirst, NoNumericDifferenceLeavesItToTheSymbolicCheck) {
  // Stages do not prove this plan (a rotated chunk is not equal by canonical
  // form within its stage), the whole-plan check does.
  ir::Case c = frontend::read_case(test_corpus::case_path("generated/llama3_cp2_balanced_tp2_sp.pbtxt"));
  auto v = verify::verify_case(c, "t", numeric_always());
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  EXPECT_FALSE(v.stage_note.empty());
}

}  // namespace
