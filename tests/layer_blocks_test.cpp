// Repeated layers: blocks found by the layer numbers in value names, and which
// blocks are exact images of the one before (reduce/layer_blocks.h).
#include "reduce/layer_blocks.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "tests/lib/layered_plan.h"

using namespace parity;

namespace {

using test_plans::llama16;

const reduce::GraphLayers& scope(const std::vector<reduce::GraphLayers>& g,
                                 const std::string& name) {
  auto it = std::find_if(g.begin(), g.end(), [&](const auto& x) { return x.scope == name; });
  if (it == g.end()) throw std::runtime_error("no scope " + name);
  return *it;
}

bool has_run(const reduce::GraphLayers& g, int64_t a, int64_t b) {
  return std::find(g.runs.begin(), g.runs.end(), std::pair<int64_t, int64_t>{a, b}) != g.runs.end();
}

}  // namespace

TEST(LayerBlocks, TokensStandAloneBetweenSeparators) {
  auto layers = [](const std::string& n) {
    std::vector<int64_t> v;
    for (const auto& t : reduce::layer_tokens(n)) v.push_back(t.layer);
    return v;
  };
  EXPECT_EQ(layers("l77.attn.q"), std::vector<int64_t>{77});
  EXPECT_EQ(layers("d_l2.out_1"), std::vector<int64_t>{2});
  EXPECT_EQ(layers("grad.local.l3.wq.acc"), std::vector<int64_t>{3});
  EXPECT_EQ(layers("l0"), std::vector<int64_t>{0});
  EXPECT_TRUE(layers("clip.partial.55").empty());
  EXPECT_TRUE(layers("l07.x").empty());  // a leading zero
  EXPECT_TRUE(layers("l3x.y").empty());  // not followed by a separator
  EXPECT_TRUE(layers("xl3.y").empty());  // not preceded by one
  EXPECT_TRUE(layers("labels.mb").empty());
  EXPECT_EQ(reduce::shift_layers("d_l2.out_1", 1), "d_l3.out_1");
  EXPECT_EQ(reduce::shift_layers("grad.local.l9.w_up", 3), "grad.local.l12.w_up");
  EXPECT_EQ(reduce::shift_layers("loss.inv_count", 5), "loss.inv_count");
  EXPECT_EQ(reduce::shift_layers("l1.x", -2), "l1.x");  // no image below layer 0
  EXPECT_TRUE(reduce::is_shifted("d_l2.out_1", "d_l3.out_1", 1));
  EXPECT_TRUE(reduce::is_shifted("grad.local.l9.w_up", "grad.local.l12.w_up", 3));
  EXPECT_TRUE(reduce::is_shifted("loss.inv_count", "loss.inv_count", 4));
  EXPECT_FALSE(reduce::is_shifted("d_l2.out_1", "d_l3.out_2", 1));
  EXPECT_FALSE(reduce::is_shifted("l2.x", "l4.x", 1));
  EXPECT_FALSE(reduce::is_shifted("l2.x", "l3x", 1));
  EXPECT_FALSE(reduce::is_shifted("l9.x", "l10.x.y", 1));
}

// A pipeline stage's layers are the same block written out again: sends and
// receives are glue, so a stage's first layer (reading what it received) and
// its last (whose output is sent) are images too. The model's first and last
// layers (embedding, head) differ.
TEST(LayerBlocks, InteriorLayersOfAGeneratedPlanAreImages) {
  auto g = reduce::find_layer_blocks(corpus::generate(llama16()));
  const auto& spec = scope(g, "spec");
  EXPECT_EQ(spec.blocks.size(), 16u);
  EXPECT_TRUE(has_run(spec, 1, 14)) << reduce::layers_report(g);
  const auto& s0 = scope(g, "program stage0");
  EXPECT_TRUE(has_run(s0, 1, 7)) << reduce::layers_report(g);
  EXPECT_GT(s0.glue_ops, 0u);  // the microbatch loop carries every layer's accumulators
  const auto& s1 = scope(g, "program stage1");
  EXPECT_TRUE(has_run(s1, 8, 14)) << reduce::layers_report(g);
  EXPECT_EQ(s1.blocks.count(7), 0u);  // it only receives layer 7's output
}

// A bug in one layer breaks the run at that layer, and the report names the
// op of that layer that differs.
TEST(LayerBlocks, AOneLayerBugIsTheLayerThatIsNoImage) {
  ir::Case c = corpus::generate(llama16());
  corpus::inject_bug(c, "missing-allreduce@layer=4");
  auto g = reduce::find_layer_blocks(c);
  const auto& s0 = scope(g, "program stage0");
  EXPECT_FALSE(has_run(s0, 1, 7));
  EXPECT_TRUE(has_run(s0, 1, 3)) << reduce::layers_report(g);
  EXPECT_TRUE(has_run(s0, 5, 7)) << reduce::layers_report(g);
  auto br =
      std::find_if(s0.breaks.begin(), s0.breaks.end(), [](const auto& b) { return b.layer == 4; });
  ASSERT_NE(br, s0.breaks.end());
  ASSERT_NE(br->op, nullptr);
  EXPECT_NE(br->op->label().find("l4."), std::string::npos) << br->op->label();
  // The spec is untouched: its run goes on through layer 4.
  EXPECT_TRUE(has_run(scope(g, "spec"), 1, 14));
}

// A constant changed in one layer only (same op count, same names) is found
// by the attribute comparison.
TEST(LayerBlocks, AnAttributeChangedInOneLayerIsNamed) {
  ir::Case c = corpus::generate(llama16());
  bool changed = false;
  for (auto& prog : c.plan.programs)
    for (auto& op : prog.graph.ops)
      if (!changed && op.kind == "loop")
        for (auto& inner : op.regions[0].ops)
          if (!changed && inner.kind == "scale" && !inner.results.empty() &&
              inner.results[0] == "l3.attn.scaled") {
            inner.attrs["factor"] = 0.5;
            changed = true;
          }
  ASSERT_TRUE(changed);
  auto g = reduce::find_layer_blocks(c);
  const auto& s0 = scope(g, "program stage0");
  auto br =
      std::find_if(s0.breaks.begin(), s0.breaks.end(), [](const auto& b) { return b.layer == 3; });
  ASSERT_NE(br, s0.breaks.end()) << reduce::layers_report(g);
  EXPECT_NE(br->why.find("factor=0.5"), std::string::npos) << br->why;
  EXPECT_TRUE(
      std::any_of(s0.breaks.begin(), s0.breaks.end(), [](const auto& b) { return b.layer == 4; }));
}
