// The lineage of a counterexample: walked back from the diverging value across
// ranks and iterations, stopping at placed values.
#include <gtest/gtest.h>

#include <set>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "verify/check.h"

using namespace parity;

namespace {

verify::Verdict verify_bug(const std::string& bug, int dp, int tp, int pp, int mb) {
  corpus::GenOptions o;
  o.model = "llama3-8b";
  o.dp = dp;
  o.tp = tp;
  o.pp = pp;
  o.mb = mb;
  o.layers = 2;
  ir::Case c = corpus::generate(o);
  corpus::inject_bug(c, bug);
  return verify::verify_case(c, "t", verify::VerifyOptions{});
}

// A gradient all-reduced over the wrong axis: the lineage names the
// collective and reads its operands on both ranks of the group it used.
TEST(Lineage, CrossesRanksThroughTheCollective) {
  auto v = verify_bug("wrong-axis", 2, 2, 1, 1);
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch);
  ASSERT_TRUE(v.cex);
  const auto& lin = v.cex->lineage;
  ASSERT_GE(lin.size(), 3u);
  EXPECT_EQ(lin[0].value, v.cex->value);
  EXPECT_EQ(lin[0].rank_str, v.cex->rank.substr(0, lin[0].rank_str.size()));
  bool found = false;
  for (const auto& st : lin) {
    if (st.op.rfind("allreduce", 0) != 0) continue;
    found = true;
    std::set<std::string> ranks;
    for (size_t f : st.from) ranks.insert(lin.at(f).rank_str);
    EXPECT_EQ(ranks.size(), 2u) << "the operands of every member of the group";
  }
  EXPECT_TRUE(found) << "the wrong collective is on the path";
  // Every step other than the first either is placed (the boundary) or reads something.
  for (size_t i = 1; i < lin.size(); ++i)
    EXPECT_TRUE(!lin[i].placed.empty() || !lin[i].from.empty() || lin[i].op == "input") << lin[i].value;
}

// A bug in the second microbatch of a pipeline: the walk stays in that
// iteration and crosses the stage boundary by recv.
TEST(Lineage, NamesTheIterationAndTheRecv) {
  auto v = verify_bug("missing-allreduce@layer=1", 1, 2, 2, 2);
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch);
  ASSERT_TRUE(v.cex);
  const auto& lin = v.cex->lineage;
  ASSERT_FALSE(lin.empty());
  EXPECT_EQ(lin[0].iter, v.cex->iter);
  bool identity = false, recv = false;
  for (const auto& st : lin) {
    identity |= st.op.rfind("identity", 0) == 0;
    recv |= st.op.rfind("recv", 0) == 0;
  }
  EXPECT_TRUE(identity) << "the all-reduce the bug replaced by an identity";
  EXPECT_TRUE(recv) << "the activation received from the previous stage";
}

}  // namespace
