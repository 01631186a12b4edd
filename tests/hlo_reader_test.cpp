// The HLO text reader: shardings, replica groups and the instruction syntax
// as XLA prints them.
#include <gtest/gtest.h>

#include "frontend/hlo/sharding.h"
#include "frontend/hlo/text.h"
#include "ir/error.h"

namespace hlo = parity::frontend::hlo;
namespace ir = parity::ir;

namespace {

ir::Mesh mesh(std::vector<std::pair<std::string, int64_t>> axes) {
  ir::Mesh m;
  for (auto& [n, s] : axes) m.axes.push_back({n, s});
  return m;
}

TEST(HloSharding, IotaTileAssignmentWithTranspose) {
  std::vector<int64_t> shape;
  auto d = hlo::iota_devices("[4,2]<=[2,4]T(1,0)", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(d, (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
}

TEST(HloSharding, ColumnSplitOverTheSecondAxisIsThatAxis) {
  auto s = hlo::parse_sharding("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  auto r = hlo::region_of(s, {16, 32}, mesh({{"dp", 2}, {"tp", 4}}));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].size.str(), "16");
  EXPECT_EQ(r[1].offset.str(), "$tp*8");
  EXPECT_EQ(r[1].size.str(), "8");
}

TEST(HloSharding, TileIndexIsALinearIndexOrARingStep) {
  auto m = mesh({{"dp", 2}, {"tp", 4}});
  std::vector<int64_t> by_dp_tp, ring;
  for (int64_t r = 0; r < 8; ++r) {
    by_dp_tp.push_back(r);                       // dp major, tp minor
    ring.push_back((m.coord_of(r)[1] + 1) % 4);  // one step around the tp ring
  }
  EXPECT_EQ(hlo::tile_index(m, by_dp_tp, 8)->str(), "$dp*4+$tp");
  EXPECT_EQ(hlo::tile_index(m, ring, 4)->str(), "($tp+1)%tp");
  EXPECT_FALSE(hlo::tile_index(m, std::vector<int64_t>(8, 0), 4));
}

TEST(HloSharding, ReplicatedIsTheWholeTensor) {
  auto r = hlo::region_of(hlo::parse_sharding("{replicated}"), {4, 4}, mesh({{"p", 8}}));
  EXPECT_TRUE(r.empty());
}

TEST(HloSharding, TilesInNoMeshOrderAreRefused) {
  auto s = hlo::parse_sharding("{devices=[2,1,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}");
  EXPECT_THROW(hlo::region_of(s, {8, 16}, mesh({{"dp", 2}, {"tp", 4}})), std::invalid_argument);
}

TEST(HloSharding, UnevenTilesAreRefused) {
  auto s = hlo::parse_sharding("{devices=[4,1]<=[4]}");
  EXPECT_THROW(hlo::region_of(s, {6, 2}, mesh({{"p", 4}})), std::invalid_argument);
}

TEST(HloSharding, ManualAndUnknownFlagsAreRefused) {
  EXPECT_THROW(hlo::region_of(hlo::parse_sharding("{manual}"), {4}, mesh({{"p", 2}})),
               std::invalid_argument);
  EXPECT_THROW(hlo::parse_sharding("{devices=[2]<=[2] last_tile_dims={manual}}"),
               std::invalid_argument);
  EXPECT_THROW(hlo::parse_sharding("{devices=[2]0,1,2}"), std::invalid_argument);
}

TEST(HloReplicaGroups, EveryFormGivesTheSameGroups) {
  const std::vector<std::vector<int64_t>> dp = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  EXPECT_EQ(hlo::parse_replica_groups("{{0,4},{1,5},{2,6},{3,7}}", 8), dp);
  EXPECT_EQ(hlo::parse_replica_groups("[4,2]<=[2,4]T(1,0)", 8), dp);
  EXPECT_EQ(hlo::parse_replica_groups("mesh['axis_0'=2,'axis_1'=1,'axis_2'=4] {'axis_0'}", 8), dp);
  auto m = mesh({{"dp", 2}, {"tp", 4}});
  auto axes = hlo::axes_of_groups(dp, m);
  ASSERT_TRUE(axes);
  EXPECT_EQ(*axes, (ir::Strings{"dp"}));
  auto tp = hlo::axes_of_groups(hlo::parse_replica_groups("[2,4]<=[8]", 8), m);
  ASSERT_TRUE(tp);
  EXPECT_EQ(*tp, (ir::Strings{"tp"}));
  EXPECT_EQ(hlo::parse_replica_groups("{}", 3), (std::vector<std::vector<int64_t>>{{0, 1, 2}}));
}

TEST(HloReplicaGroups, MeshWithDeviceOrder) {
  // Devices of the mesh (2,2,2) listed as iota transposed (0,2,1): mesh
  // position 1 holds device 2.
  auto g = hlo::parse_replica_groups("mesh['a'=2,'b'=2,'c'=2]", 8, "([2,2,2]T(0,2,1)) {'c'}");
  EXPECT_EQ(g[0], (std::vector<int64_t>{0, 2}));
}

TEST(HloReplicaGroups, GroupsThatAreNoMeshAxesStayGroups) {
  EXPECT_FALSE(hlo::axes_of_groups({{0, 3}, {1, 2}}, mesh({{"p", 4}})));
}

TEST(HloText, InstructionsOperandsAttributesAndSourceLines) {
  const std::string text = R"(HloModule m, num_partitions=2

FileNames
1 "/src/train.py"

FunctionNames
1 "step"

FileLocations
1 {file_name_id=1 function_name_id=1 line=42 end_line=42 column=3 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[4,2]) -> (f32[4,2], f32[]) {
  %x = f32[4,2]{0,1} parameter(0), sharding={replicated}
  %all-reduce = f32[4,2]{1,0} all-reduce(f32[4,2]{1,0} %x), channel_id=1, replica_groups={{0,1}}, to_apply=%add, metadata={op_name="jit(step)/dot" stack_frame_id=1}
  %c = f32[] constant(-inf)
  ROOT %t = (f32[4,2]{1,0}, /*index=1*/f32[]) tuple(%all-reduce, %c)
}
)";
  hlo::Module m = hlo::parse_module(text, "t.hlo");
  EXPECT_EQ(m.attrs.at("num_partitions"), "2");
  const hlo::Computation* e = m.entry();
  ASSERT_TRUE(e);
  const hlo::Instr* ar = e->find("all-reduce");
  ASSERT_TRUE(ar);
  EXPECT_EQ(ar->operands, (std::vector<std::string>{"x"}));
  EXPECT_EQ(*ar->attr("replica_groups"), "{{0,1}}");
  EXPECT_EQ(ar->origin, "train.py:42");
  EXPECT_EQ(ar->line, 23);
  EXPECT_EQ(e->root()->shape.tuple.size(), 2u);
  EXPECT_EQ(e->find("c")->operand_text, "-inf");
}

TEST(HloText, MalformedTextIsAnErrorAtItsPosition) {
  try {
    hlo::parse_module("HloModule m\n\nENTRY %main () -> f32[] {\n  %c = f32[ constant(1)\n}\n",
                      "bad.hlo");
    FAIL() << "accepted";
  } catch (const ir::InvalidInput& e) {
    EXPECT_EQ(e.diag().line, 4);
    EXPECT_GT(e.diag().col, 1);
    EXPECT_EQ(e.diag().check, "syntax");
  }
  EXPECT_THROW(hlo::parse_module("ENTRY %main () -> f32[] {\n}\n", "x.hlo"), ir::InvalidInput);
  EXPECT_THROW(hlo::parse_module("", "empty.hlo"), ir::InvalidInput);
}

}  // namespace
