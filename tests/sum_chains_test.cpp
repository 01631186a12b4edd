// Chains of additions in a stage are summed once (verify/sum_chains.h): the
// result must be the sum the additions build one by one, whatever their
// association, a broadcasting addition in the chain included; a wrong term is
// still found.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "corpus/builder.h"
#include "verify/check.h"

using namespace parity;
using namespace parity::corpus;

namespace {

// spec: out = (((a + b) + c) + s) + d, squared (s a scalar, broadcast);
// plan: (c + a) + ((d + s) + b') on one rank, b' = b or the wrong `wrong`.
ir::Case chain(const std::string& plan_b) {
  SpecBuilder s("chain");
  s.dim("N", 4);
  std::vector<std::string> in;
  for (const char* n : {"a", "b", "c", "d", "wrong"}) in.push_back(s.input(n, f32, {"N"}, ir::Role::data));
  s.input("s", f32, {}, ir::Role::data);
  GraphBuilder& g = s.graph();
  g.let("p1", "add", {"a", "b"});
  g.let("p2", "add", {"p1", "c"});
  g.let("p3", "add", {"p2", "s"});
  g.let("p4", "add", {"p3", "d"});
  g.let("out", "mul", {"p4", "p4"});
  s.output("out", ir::Role::loss);

  PlanBuilder p("chain_plan");
  p.axis("x", 1).dim("N", 4);
  GraphBuilder& q = p.program("all");
  for (const char* n : {"a", "b", "c", "d", "wrong"}) q.input(n, f32, {"N"});
  q.input("s", f32, {});
  q.let("t1", "add", {"c", "a"});
  q.let("t2", "add", {"d", "s"});
  q.let("t3", "add", {"t2", plan_b});
  q.let("t4", "add", {"t1", "t3"});
  q.let("out", "mul", {"t4", "t4"});
  for (const char* n : {"a", "b", "c", "d", "wrong", "s"}) p.replica("all", n, n);
  p.replica("all", "out", "out");
  return ir::Case{s.build(), p.build()};
}

TEST(SumChains, AnyAssociationOfTheSameTermsVerifies) {
  auto v = verify::verify_case(chain("b"), "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason << v.stage_note;
  EXPECT_GT(v.stages, 0u) << "proved by stages: " << v.stage_note;
}

TEST(SumChains, AWrongTermIsAMismatch) {
  auto v = verify::verify_case(chain("wrong"), "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
}

}  // namespace
