// The example cases and the builder that makes them: every example validates,
// round-trips through both file formats, and equals its checked-in text file
// (run with PARITY_REGEN=1 to rewrite those files after changing an example).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "corpus/builder.h"
#include "corpus/examples.h"
#include "frontend/proto/case_io.h"
#include "ir/validate.h"

namespace parity::corpus {
namespace {

// The file-driven runner (tests/run_expect.sh) reads these header lines.
constexpr const char* kHeader =
    "# Generated from corpus/examples.cpp by tests/corpus_examples_test.cpp\n"
    "# (PARITY_REGEN=1 build/tests/parity_tests --gtest_filter='*CorpusExamples*').\n"
    "# expect-cmd: verify\n"
    "# expect-exit: 0\n";

std::string example_path(const std::string& name) {
  return std::string(PARITY_SOURCE_DIR) + "/corpus/cases/examples/" + name + ".pbtxt";
}

std::string diags_str(const ir::DiagList& d) {
  std::string s;
  for (const auto& x : d.items) s += x.str() + "\n";
  return s;
}

class CorpusExamples : public testing::TestWithParam<Example> {};

TEST_P(CorpusExamples, Validates) {
  ir::Case c = GetParam().make();
  ir::DiagList d = ir::validate_case(c, GetParam().name);
  EXPECT_TRUE(d.empty()) << diags_str(d);
}

TEST_P(CorpusExamples, RoundTrips) {
  ir::Case c = GetParam().make();
  for (auto f : {frontend::Format::text, frontend::Format::binary}) {
    std::string bytes = frontend::write_case_string(c, f);
    ir::Case back = frontend::parse_case(bytes, GetParam().name, f);
    EXPECT_TRUE(back == c) << "format " << (f == frontend::Format::text ? "text" : "binary");
    // Writing is deterministic, so the checked-in files are stable.
    EXPECT_EQ(frontend::write_case_string(back, f), bytes);
  }
}

TEST_P(CorpusExamples, MatchesCheckedInFile) {
  ir::Case c = GetParam().make();
  std::string path = example_path(GetParam().name);
  if (const char* regen = std::getenv("PARITY_REGEN"); regen && std::string(regen) == "1") {
    std::ofstream out(path, std::ios::binary);
    out << kHeader << frontend::write_case_string(c, frontend::Format::text);
    ASSERT_TRUE(out.good()) << "cannot write " << path;
  }
  // Parsed, not byte-compared: the header comments are not part of the case.
  ir::Case on_disk = frontend::read_case(path);
  EXPECT_TRUE(on_disk == c)
      << path << " differs from corpus/examples.cpp; regenerate it with PARITY_REGEN=1";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("# expect-exit: 0\n"), std::string::npos) << path;
}

INSTANTIATE_TEST_SUITE_P(All, CorpusExamples, testing::ValuesIn(examples()),
                         [](const testing::TestParamInfo<Example>& i) { return i.param.name; });

TEST(CorpusBuilder, FreshNamesAvoidTakenOnes) {
  GraphBuilder g;
  auto x = g.input("x", f32, {"B", "H"});
  g.op("neg", {x}, {}, "neg_0");  // takes the name a fresh `neg` result would get first
  auto n = g.op("neg", {x});
  EXPECT_EQ(n, "neg_1");
  ir::DiagList d;
  ir::check_graph(g.graph(), {{"B", 2}, {"H", 3}}, nullptr, ir::Diag{}, d);
  EXPECT_TRUE(d.empty()) << diags_str(d);
}

TEST(CorpusBuilder, DuplicateNamesThrowAcrossLoopBodies) {
  GraphBuilder g;
  auto x = g.input("x", f32, {"N"});
  EXPECT_THROW(g.op("neg", {x}, {}, "x"), std::logic_error);
  // A loop body shares the program's names: SSA names are unique program-wide.
  EXPECT_THROW(g.loop("2", "i", {x},
                      [](GraphBuilder& b) {
                        b.input("x", f32, {"N"});
                        b.output("x");
                      }),
               std::logic_error);
}

TEST(CorpusBuilder, AttributeHelpersMakeTheRightKinds) {
  GraphBuilder g;
  auto x = g.input("x", f32, {"N"});
  g.op("slice", {x}, {{"dim", 0}, {"offset", expr("$mb*2")}, {"size", expr("N/2")}}, "s");
  g.op("scale", {x}, {{"factor", 0.5}}, "t");
  g.op("allreduce", {x}, {{"axes", strings({"tp"})}, {"reduce", "sum"}}, "r");
  g.op_n("send", {x}, {{"peer", coords({{"pp", "$pp+1"}})}, {"tag", 3}}, {});
  const auto& ops = g.graph().ops;
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ir::attr_kind(*ops[0].attr("dim")), ir::AttrKind::Int);
  EXPECT_EQ(ir::attr_str(*ops[0].attr("offset")), ir::DimExpr::parse("$mb*2").str());
  EXPECT_EQ(ir::attr_kind(*ops[1].attr("factor")), ir::AttrKind::Float);
  EXPECT_EQ(ir::attr_kind(*ops[2].attr("axes")), ir::AttrKind::Strings);
  EXPECT_EQ(ir::attr_kind(*ops[2].attr("reduce")), ir::AttrKind::String);
  EXPECT_EQ(ir::attr_kind(*ops[3].attr("peer")), ir::AttrKind::Coords);
  EXPECT_TRUE(ops[3].results.empty());
}

TEST(CorpusBuilder, PlanBuilderPlacements) {
  PlanBuilder p("p");
  p.axis("tp", 2).dim("H", 4);
  GraphBuilder& g = p.program("main", {{"tp", {0, 1}}});
  g.input("w", f32, {"H/tp"});
  p.region("main", "w", "w", {{"$tp*(H/tp)", "H/tp"}}).partial("main", "w", "v", {"tp"});
  ir::Plan plan = p.build();
  ASSERT_EQ(plan.programs.size(), 1u);
  EXPECT_EQ(plan.programs[0].ranks.fixed.at("tp"), (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(plan.placements.size(), 2u);
  EXPECT_EQ(plan.placements[0].kind, ir::PlacementKind::region);
  ASSERT_EQ(plan.placements[0].region.size(), 1u);
  EXPECT_EQ(plan.placements[0].region[0].size.str(), ir::DimExpr::parse("H/tp").str());
  EXPECT_EQ(plan.placements[1].kind, ir::PlacementKind::partial);
  EXPECT_EQ(plan.placements[1].axes, (ir::Strings{"tp"}));
}

}  // namespace
}  // namespace parity::corpus
