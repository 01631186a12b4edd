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
#include "verify/check.h"

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
    EXPECT_NE(v.cex->found_by.find("numeric evaluation of the whole plan"), std::string::npos) << v.cex->found_by;
    EXPECT_GT(std::fabs(v.cex->spec_num - v.cex->plan_num), 1e-6) << bug;
    EXPECT_FALSE(v.stage_note.empty());
    // The symbolic path reaches the same verdict.
    verify::VerifyOptions sym;
    sym.numeric_first_above = SIZE_MAX;
    EXPECT_EQ(verify::verify_case(c, "t", sym).kind, verify::VerdictKind::mismatch) << bug;
  }
}

TEST(NumericFirst, NoNumericDifferenceLeavesItToTheSymbolicCheck) {
  // Stages do not prove this plan (a rotated chunk is not equal by canonical
  // form within its stage), the whole-plan check does.
  ir::Case c = frontend::read_case(std::string(PARITY_SOURCE_DIR) + "/corpus/cases/gen/llama3_cp2_balanced_tp2_sp.pbtxt");
  auto v = verify::verify_case(c, "t", numeric_always());
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  EXPECT_FALSE(v.stage_note.empty());
}

}  // namespace
