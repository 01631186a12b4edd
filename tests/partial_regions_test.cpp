// One rank may place two partial sums on two regions of the same spec value
// (balanced context-parallel chunks are placed this way): each region's
// members are summed on their own, by the whole-plan checker and by stages.
#include <gtest/gtest.h>

#include <string>

#include "frontend/proto/case_io.h"
#include "verify/check.h"

using namespace parity;

namespace {

// mlp_tp2 with its partial `o_part -> o` split into the rows [0, B/2) and
// [B/2, B), each a slice placed as a partial sum over tp. `bottom_offset` is
// where the second slice is taken from (B/2 is right).
ir::Case split_partial(const std::string& bottom_offset) {
  ir::Case c = frontend::read_case(std::string(PARITY_SOURCE_DIR) + "/corpus/cases/examples/mlp_tp2.pbtxt");
  ir::Program& prog = c.plan.programs.at(0);
  auto at = prog.graph.ops.begin();
  while (at != prog.graph.ops.end() && !(at->results.size() == 1 && at->results[0] == "o_part")) ++at;
  EXPECT_NE(at, prog.graph.ops.end());
  auto slice = [](const std::string& out, const std::string& offset) {
    ir::Op op;
    op.kind = "slice";
    op.operands = {"o_part"};
    op.results = {out};
    op.attrs["dim"] = ir::DimExpr::parse("0");
    op.attrs["offset"] = ir::DimExpr::parse(offset);
    op.attrs["size"] = ir::DimExpr::parse("B/2");
    return op;
  };
  at = prog.graph.ops.insert(at + 1, slice("o_top", "0"));
  prog.graph.ops.insert(at + 1, slice("o_bot", bottom_offset));
  for (auto it = c.plan.placements.begin(); it != c.plan.placements.end(); ++it)
    if (it->value == "o_part") {
      c.plan.placements.erase(it);
      break;
    }
  for (const char* half : {"top", "bot"}) {
    ir::Placement pl;
    pl.program = prog.name;
    pl.value = std::string("o_") + half;
    pl.spec_value = "o";
    pl.kind = ir::PlacementKind::partial;
    pl.axes = {"tp"};
    pl.region = {{ir::DimExpr::parse(half == std::string("top") ? "0" : "B/2"), ir::DimExpr::parse("B/2")},
                 {ir::DimExpr::parse("0"), ir::DimExpr::parse("H")}};
    c.plan.placements.push_back(pl);
  }
  return c;
}

TEST(PartialRegions, TwoPartialRegionsOnOneRankAreSummedApart) {
  for (bool stages : {true, false}) {
    verify::VerifyOptions o;
    o.stages = stages;
    auto v = verify::verify_case(split_partial("B/2"), "t", o);
    EXPECT_EQ(v.kind, verify::VerdictKind::verified) << (stages ? "stages: " : "whole: ") << v.reason << v.stage_note;
    if (stages) {
      EXPECT_FALSE(v.stage_list.empty()) << v.stage_note;
    }
  }
}

TEST(PartialRegions, AWrongRegionIsStillAMismatch) {
  for (bool stages : {true, false}) {
    verify::VerifyOptions o;
    o.stages = stages;
    auto v = verify::verify_case(split_partial("0"), "t", o);
    EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << (stages ? "stages" : "whole");
  }
}

}  // namespace
