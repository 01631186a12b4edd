// A literal equal to a size at its reduced value: a plan that hard-codes the
// factor for 2 data-parallel ranks looks right on 2 ranks only. Reduction must
// not make it VERIFIED.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "reduce/reduce.h"
#include "reduce/stages.h"
#include "verify/check.h"

using namespace parity;

namespace {

// The dp=8 plan with every gradient all-reduce written as an average times
// `factor`: right for factor 8 (the sum), wrong for any other.
ir::Case avg_times(double factor) {
  corpus::GenOptions g;
  g.model = "llama3-8b";
  g.dp = 8;
  g.layers = 1;
  ir::Case c = corpus::generate(g);
  int n = 0;
  std::function<void(ir::Graph&)> walk = [&](ir::Graph& gr) {
    for (size_t i = 0; i < gr.ops.size(); ++i) {
      for (auto& r : gr.ops[i].regions) walk(r);
      ir::Op& op = gr.ops[i];
      if (op.kind != "allreduce" || op.results.empty() || op.results[0].rfind("grad.reduced.", 0) != 0) continue;
      std::string out = op.results[0];
      op.results[0] = out + ".avg";
      op.attrs["reduce"] = std::string("avg");
      ir::Op s;
      s.kind = "scale";
      s.operands = {out + ".avg"};
      s.results = {out};
      s.attrs["factor"] = factor;
      gr.ops.insert(gr.ops.begin() + static_cast<long>(i) + 1, s);
      ++i;
      ++n;
    }
  };
  for (auto& p : c.plan.programs) walk(p.graph);
  EXPECT_GT(n, 0);
  return c;
}

TEST(LiteralCollision, FactorRightOnlyAtTheReducedSizeIsAMismatch) {
  auto v = verify::verify_case(avg_times(2), "t", verify::VerifyOptions{});
  EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
  bool kept = false;
  for (const auto& k : v.kept) kept |= k.rfind("dp kept at 8", 0) == 0;
  EXPECT_TRUE(kept) << "dp is kept: its reduced size equals the literal";
}

TEST(LiteralCollision, TheRightFactorVerifies) {
  auto v = verify::verify_case(avg_times(8), "t", verify::VerifyOptions{});
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason << v.stage_note;
}

// A literal equal to a size *as given* keeps that size (it may stand for it),
// so a plan can stay too large to check. An instance reduced past it shows a
// difference only when every reading of the literal (as written, as each size
// it equals) differs: the wrong factor 1/8 is found, the right factor 8 (the
// reading "dp") is not refuted.
verify::VerifyOptions too_small_for(const ir::Case& c) {
  reduce::Options ro;
  ro.refute = ro.reread_literals = true;
  reduce::Result r = reduce::reduce_case(c, ro);
  EXPECT_TRUE(r.changed);
  EXPECT_FALSE(r.readings.empty());
  reduce::Result kept = reduce::reduce_case(c);
  EXPECT_EQ(kept.reduced.plan.mesh.num_ranks(), 8);  // dp kept at 8
  verify::VerifyOptions o;
  o.max_rank_instructions = reduce::StageGraph(r.reduced, 1, nullptr, 0).rank_instructions() - 1;
  EXPECT_LT(o.max_rank_instructions * 2,
            reduce::StageGraph(kept.reduced, 1, nullptr, 0).rank_instructions());
  return o;
}

TEST(LiteralCollision, EveryReadingOfALiteralEqualToASizeDiffersIsAMismatch) {
  ir::Case c = avg_times(1.0 / 8);
  auto v = verify::verify_case(c, "t", too_small_for(c));
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
  ASSERT_TRUE(v.cex);
  EXPECT_NE(v.cex->found_by.find("under each reading"), std::string::npos) << v.cex->found_by;
  EXPECT_NE(v.cex->found_by.find("1/q with dp=8"), std::string::npos) << v.cex->found_by;
  EXPECT_NE(v.cex->rank.find("reduced instance"), std::string::npos) << v.cex->rank;
}

// A literal read as a size is also read as a product of three (64 =
// dp*D*NH, the reduced dp = 2 making it 16): a correct plan whose literal
// stands for such a product has its own reading among the runs.
TEST(LiteralCollision, ALiteralIsAlsoReadAsAProductOfThreeSizes) {
  ir::Case c = avg_times(1.0 / 64);
  reduce::Options ro;
  ro.refute = ro.reread_literals = true;
  reduce::Result r = reduce::reduce_case(c, ro);
  ASSERT_FALSE(r.readings.empty());
  bool triple = false;
  for (const auto& [text, v] : r.readings[0].as)
    triple |= text.find("dp*D*NH=64") != std::string::npos && v == 1.0 / 16;
  EXPECT_TRUE(triple);
}

// The same search finds a bug at one layer: expert gradients of layer 2
// alone divided by ep = 16 (a literal 1/16, which keeps ep and every size
// of 16 from shrinking).
TEST(LiteralCollision, AOneLayerBugBehindALiteralEqualToASizeIsFound) {
  corpus::GenOptions g;
  g.model = "deepseek-v3-671b";
  g.ep = 16;
  g.layers = 3;
  g.step = corpus::Step::grads;
  ir::Case c = corpus::generate(g);
  corpus::inject_bug(c, "ep-grad-scale@layer=2");
  reduce::Options ro;
  ro.refute = ro.reread_literals = true;
  reduce::Result r = reduce::reduce_case(c, ro);
  ASSERT_TRUE(r.changed);
  const size_t small = reduce::StageGraph(r.reduced, 1, nullptr, 0).rank_instructions();
  reduce::Result kept = reduce::reduce_case(c);
  const ir::Case& normal = kept.changed ? kept.reduced : c;
  ASSERT_LT(4 * small,
            reduce::StageGraph(normal, 1, nullptr, 0).rank_instructions());  // past a numeric run
  verify::VerifyOptions o;
  o.max_rank_instructions = small - 1;
  auto v = verify::verify_case(c, "t", o);
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
  EXPECT_NE(v.cex->found_by.find("under each reading"), std::string::npos) << v.cex->found_by;
  EXPECT_NE(v.cex->found_by.find("grad.l2.e_gate"), std::string::npos) << v.cex->found_by;
}

TEST(LiteralCollision, ALiteralRightUnderOneReadingIsNotRefuted) {
  ir::Case c = avg_times(8);
  auto v = verify::verify_case(c, "t", too_small_for(c));
  EXPECT_EQ(v.kind, verify::VerdictKind::unknown) << v.reason;
  EXPECT_NE(v.reason.find("not under every reading"), std::string::npos) << v.reason;
}

}  // namespace
