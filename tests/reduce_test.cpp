// Mesh, microbatch and shape reduction, and the staged prover: each applies
// where it should, is refused where a condition fails, and never hides a bug
// placed on one rank, one microbatch or one layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "frontend/proto/case_io.h"
#include "ir/validate.h"
#include "reduce/reduce.h"
#include "verify/check.h"

using namespace parity;

namespace {

corpus::GenOptions opts(const std::string& model) {
  corpus::GenOptions o;
  o.model = model;
  return o;
}

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// The first op (depth-first) of any program that satisfies `pred`.
ir::Op* find_op(ir::Plan& p, const std::function<bool(const ir::Op&)>& pred, ir::Graph** where = nullptr,
                size_t* index = nullptr) {
  std::function<ir::Op*(ir::Graph&)> walk = [&](ir::Graph& g) -> ir::Op* {
    for (size_t i = 0; i < g.ops.size(); ++i) {
      if (pred(g.ops[i])) {
        if (where) *where = &g;
        if (index) *index = i;
        return &g.ops[i];
      }
      for (auto& r : g.ops[i].regions)
        if (ir::Op* o = walk(r)) return o;
    }
    return nullptr;
  };
  for (auto& prog : p.programs)
    if (ir::Op* o = walk(prog.graph)) return o;
  return nullptr;
}

bool on_axis(const ir::Op& op, const std::string& kind, const std::string& axis) {
  if (op.kind != kind) return false;
  const ir::Attr* a = op.attr("axes");
  return a && std::holds_alternative<ir::Strings>(*a) && std::get<ir::Strings>(*a) == ir::Strings{axis};
}

// Llama at dp 8, tp 4, pp 2 and 4 microbatches: every kind of size reduces.
ir::Case dp8_tp4_pp2_mb4() {
  auto o = opts("llama3-8b");
  o.dp = 8;
  o.tp = 4;
  o.pp = 2;
  o.mb = 4;
  return corpus::generate(o);
}

}  // namespace

TEST(Reduce, DataTensorAndMicrobatchesShrink) {
  ir::Case c = dp8_tp4_pp2_mb4();
  reduce::Result r = reduce::reduce_case(c);
  ASSERT_TRUE(r.changed) << joined(r.kept);
  EXPECT_TRUE(mentions(r.applied, "mesh axis dp 8 -> 2")) << joined(r.applied);
  EXPECT_TRUE(mentions(r.applied, "mesh axis tp 4 -> 2")) << joined(r.applied);
  EXPECT_TRUE(mentions(r.applied, "dim M 4 -> 2")) << joined(r.applied);
  EXPECT_TRUE(ir::validate_case(r.reduced, "r").empty());
  EXPECT_EQ(r.reduced.plan.mesh.num_ranks(), 8);
  auto v = verify::verify_case(c, "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  EXPECT_EQ(v.verified_ranks, 8);
}

// The second look compares its instance's sizes with the plain instance's,
// computed alone: the same sizes, no instance built.
TEST(Reduce, SizesOnlyGivesTheSizesOfTheFullReduction) {
  ir::Case c = dp8_tp4_pp2_mb4();
  for (int64_t keep : {2, 3}) {
    reduce::Options full;
    full.keep = full.least = keep;
    reduce::Options sizes = full;
    sizes.sizes_only = true;
    reduce::Result a = reduce::reduce_case(c, full), b = reduce::reduce_case(c, sizes);
    ASSERT_TRUE(a.changed);
    EXPECT_EQ(a.dims, b.dims);
    ASSERT_EQ(a.axes.size(), b.axes.size());
    for (size_t i = 0; i < a.axes.size(); ++i) EXPECT_EQ(a.axes[i].to, b.axes[i].to) << a.axes[i].axis;
    EXPECT_EQ(a.applied, b.applied);
    EXPECT_TRUE(b.reduced.plan.programs.empty());
  }
}

TEST(Reduce, PipelineAxisIsKeptWithTheReason) {
  auto o = opts("llama3-8b");
  o.pp = 4;
  o.mb = 2;
  reduce::Result r = reduce::reduce_case(corpus::generate(o));
  EXPECT_TRUE(mentions(r.kept, "pp kept at 4: send/recv peers move along it")) << joined(r.kept);
}

TEST(Reduce, NonAffineCoordinateBlocksTheAxis) {
  auto o = opts("llama3-8b");
  o.tp = 4;
  ir::Case c = corpus::generate(o);
  // Rewrite one $tp offset into an equal expression of degree 2 in $tp.
  bool done = false;
  for (auto& prog : c.plan.programs) {
    std::function<void(ir::Graph&)> walk = [&](ir::Graph& g) {
      for (auto& op : g.ops)
        for (auto& [k, a] : op.attrs)
          if (auto* e = std::get_if<ir::DimExpr>(&a); e && !done && e->str().find("$tp") != std::string::npos) {
            ir::DimExpr t = ir::DimExpr::sym("$tp");
            *e = *e + t * t - t * t;
            done = true;
          }
    };
    walk(prog.graph);
  }
  ASSERT_TRUE(done);
  reduce::Result r = reduce::reduce_case(c);
  EXPECT_TRUE(mentions(r.kept, "tp kept at 4")) << joined(r.kept);
  EXPECT_TRUE(mentions(r.kept, "non-affinely")) << joined(r.kept);
  EXPECT_EQ(verify::verify_case(c, "t", {}).kind, verify::VerdictKind::verified);
}

// A plan that divides by a hard-coded 4 where dp = 4 is right at dp = 4 and
// would be wrong at dp = 2: the literal pins dp, so no false alarm.
TEST(Reduce, LiteralEqualToTheAxisSizePinsIt) {
  auto o = opts("llama3-8b");
  o.dp = 4;
  ir::Case c = corpus::generate(o);
  ir::Graph* g = nullptr;
  size_t i = 0;
  ir::Op* ar = find_op(c.plan, [](const ir::Op& op) { return on_axis(op, "allreduce", "dp"); }, &g, &i);
  ASSERT_NE(ar, nullptr);
  std::string x = ar->operands[0];
  ar->operands[0] = x + ".times4";
  ar->attrs["reduce"] = std::string("avg");
  ir::Op scale;
  scale.kind = "scale";
  scale.operands = {x};
  scale.results = {x + ".times4"};
  scale.attrs["factor"] = 4.0;
  g->ops.insert(g->ops.begin() + static_cast<long>(i), scale);
  ASSERT_TRUE(ir::validate_case(c, "t").empty());
  reduce::Result r = reduce::reduce_case(c);
  EXPECT_TRUE(mentions(r.kept, "dp kept at 4: the literal 4")) << joined(r.kept);
  auto v = verify::verify_case(c, "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason << (v.cex ? v.cex->difference : "");
  // The same literal on a dp = 2 plan is a real bug, still found.
  o.dp = 2;
  ir::Case c2 = corpus::generate(o);
  ar = find_op(c2.plan, [](const ir::Op& op) { return on_axis(op, "allreduce", "dp"); }, &g, &i);
  ASSERT_NE(ar, nullptr);
  x = ar->operands[0];
  ar->operands[0] = x + ".times4";
  ar->attrs["reduce"] = std::string("avg");
  scale.operands = {x};
  g->ops.insert(g->ops.begin() + static_cast<long>(i), scale);
  EXPECT_EQ(verify::verify_case(c2, "t", {}).kind, verify::VerdictKind::mismatch);
}

// The attention scale 1/sqrt(D) is a literal of spec and plan alike; at
// D = S = 16 it equals 1/sqrt(q) for both. Pinned, it keeps them at 16; read
// as an indeterminate it keeps nothing, and the proof holds for every value
// of it. A plan whose scale differs from the spec's is not proved so.
TEST(Reduce, ScalarLiteralsEqualToASizeAreGeneralized) {
  auto o = opts("llama3-8b");
  o.dp = 2;
  o.tp = 2;
  o.layers = 1;
  o.dims["D"] = 16;
  o.dims["S"] = 16;
  ir::Case c = corpus::generate(o);
  reduce::Result pinned = reduce::reduce_case(c);
  EXPECT_TRUE(mentions(pinned.kept, "dim D kept at 16: the literal 0.25")) << joined(pinned.kept);
  reduce::Options go;
  go.generalize_literals = true;
  reduce::Result r = reduce::reduce_case(c, go);
  EXPECT_TRUE(mentions(r.applied, "dim D 16 -> ")) << joined(r.kept);
  EXPECT_TRUE(mentions(r.applied, "dim S 16 -> ")) << joined(r.kept);
  ASSERT_EQ(r.generalized.count(0.25), 1u);
  auto v = verify::verify_case(c, "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  EXPECT_TRUE(mentions(v.reductions, "literal 0.25 (")) << joined(v.reductions);
  // One program's scale 1/4 becomes 1/16: not the same literal.
  ir::Op* sc = find_op(c.plan, [](const ir::Op& op) {
    return op.kind == "scale" && std::get<double>(op.attrs.at("factor")) == 0.25;
  });
  ASSERT_NE(sc, nullptr);
  sc->attrs["factor"] = 0.0625;
  auto w = verify::verify_case(c, "t", {});
  EXPECT_EQ(w.kind, verify::VerdictKind::mismatch) << w.reason;
  EXPECT_FALSE(mentions(w.reductions, "read as an indeterminate")) << joined(w.reductions);
}

// DeepSeek-V2's routed-expert scale is 16, as are dp and the microbatch
// count here. The plan copies the spec's `scale` op, so the 16 is a constant
// of the model, which cannot stand for a mesh axis or a microbatch count:
// both are reduced (issue #5: dp, tp, M and five dims were pinned, and the
// 512-rank plan was verified unreduced).
TEST(Reduce, ModelConstantEqualToAnAxisSizeDoesNotPinIt) {
  auto o = opts("deepseek-v3-236b");
  o.dp = 16;
  o.mb = 16;
  o.layers = 2;
  ir::Case c = corpus::generate(o);
  reduce::Result r = reduce::reduce_case(c);
  EXPECT_TRUE(mentions(r.applied, "mesh axis dp 16 -> 2")) << joined(r.kept);
  EXPECT_TRUE(mentions(r.applied, "dim M 16 -> 2")) << joined(r.kept);
  EXPECT_FALSE(mentions(r.kept, "the literal 16")) << joined(r.kept);
  auto v = verify::verify_case(c, "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  EXPECT_EQ(v.verified_ranks, 2);
}

// The same constant, when the plan does not copy the spec op that carries it
// but computes that value as a sum along an axis of that size, pins the axis:
// no false alarm on the plan that is right by the coincidence, and the plan
// whose wrong factor (2, which pins nothing) is right only at tp = 2 is found.
TEST(Reduce, ModelConstantComputedAsACountAlongAnAxisPinsIt) {
  auto o = opts("deepseek-v3-236b");
  o.tp = 4;
  o.layers = 2;
  // No dim equals 4, so nothing but the literal can keep tp.
  for (const char* d : {"H", "F", "NH", "QL", "KVL", "E", "FE", "V", "S"}) o.dims[d] = 8;
  auto make = [&](double pre) {
    ir::Case c = corpus::generate(o);
    // Route scale 4 (= tp) in the spec and every copy of it in the plan.
    std::function<void(ir::Graph&)> rescale = [&](ir::Graph& g) {
      for (auto& op : g.ops) {
        if (op.kind == "scale" && std::get<double>(op.attrs.at("factor")) == 16.0)
          op.attrs["factor"] = 4.0;
        for (auto& sub : op.regions) rescale(sub);
      }
    };
    rescale(c.spec->graph);
    for (auto& prog : c.plan.programs) rescale(prog.graph);
    // The plan's l1.moe.gates (replicated over tp) becomes a sum along tp.
    ir::Graph* g = nullptr;
    size_t i = 0;
    ir::Op* op = find_op(
        c.plan, [](const ir::Op& x) { return x.results == ir::Strings{"l1.moe.gates"}; }, &g, &i);
    EXPECT_NE(op, nullptr);
    if (!op) return c;
    op->kind = "allreduce";
    op->attrs = {{"axes", ir::Strings{"tp"}}, {"reduce", std::string("sum")}};
    if (pre != 1) {
      std::string x = op->operands[0];
      op->operands[0] = x + ".pre";
      ir::Op sc;
      sc.kind = "scale";
      sc.operands = {x};
      sc.results = {x + ".pre"};
      sc.attrs["factor"] = pre;
      g->ops.insert(g->ops.begin() + static_cast<long>(i), sc);
    }
    EXPECT_TRUE(ir::validate_case(c, "t").empty());
    return c;
  };
  ir::Case right = make(1);
  reduce::Result r = reduce::reduce_case(right);
  // Two rules keep tp: the literal 4, and (first) the sum along tp of a value
  // that is the same on every tp rank (reduce/replicated_sums.h).
  EXPECT_TRUE(mentions(r.kept, "tp kept at 4: the literal 4 in spec op scale -> l1.moe.gates") ||
              mentions(r.kept, "tp kept at 4: a sum over tp in program main (allreduce -> l1.moe.gates)"))
      << joined(r.kept);
  auto v = verify::verify_case(right, "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason << (v.cex ? v.cex->difference : "");
  EXPECT_EQ(verify::verify_case(make(2), "t", {}).kind, verify::VerdictKind::mismatch);
}

// An allgather along cp multiplies a dim by the axis, not by its size: the
// backward reshape that copies its type used to say `S/cp*4`, a literal that
// pinned cp (and the 16384-rank 405B plan with cp = 16 stayed unreduced).
TEST(Reduce, GatheredShapesNameTheAxisSoContextParallelShrinks) {
  auto o = opts("llama3-8b");
  o.cp = 4;
  o.tp = 2;
  ir::Case c = corpus::generate(o);
  reduce::Result r = reduce::reduce_case(c);
  EXPECT_TRUE(mentions(r.applied, "mesh axis cp 4 -> 2")) << joined(r.kept);
  auto v = verify::verify_case(c, "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  EXPECT_EQ(v.verified_ranks, 4);
}

TEST(Reduce, BugOnOneRankOfALargeMeshIsFoundThere) {
  auto o = opts("llama3-8b");
  o.dp = 16;
  o.tp = 2;
  ir::Case c = corpus::generate(o);
  int64_t rank = c.plan.mesh.rank_of({10, 1});
  corpus::inject_bug(c, "scale-one-rank@rank=" + std::to_string(rank));
  auto v = verify::verify_case(c, "t", {});
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
  EXPECT_LT(v.verified_ranks, c.plan.mesh.num_ranks());
  bool at_rank = false;
  for (const auto& pl : v.placements) at_rank |= pl.failed && pl.label.find("rank" + std::to_string(rank)) != std::string::npos;
  EXPECT_TRUE(at_rank) << "the isolated rank's own values should fail";
}

TEST(Reduce, BugInOneMicrobatchIsFound) {
  auto o = opts("llama3-8b");
  o.dp = 2;
  o.pp = 2;
  o.mb = 8;
  ir::Case c = corpus::generate(o);
  corpus::inject_bug(c, "accumulator-reset@mb=5");
  auto v = verify::verify_case(c, "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
}

TEST(Reduce, BugInOneLayerIsFound) {
  auto o = opts("llama3-8b");
  o.tp = 2;
  o.layers = 8;
  ir::Case c = corpus::generate(o);
  corpus::inject_bug(c, "missing-allreduce@layer=5");
  auto v = verify::verify_case(c, "t", {});
  ASSERT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
  ASSERT_TRUE(v.cex);
  EXPECT_NE(v.cex->value.find("l5."), std::string::npos) << v.cex->value;
}

TEST(Stages, IdenticalLayersAreProvedOnce) {
  size_t distinct[2];
  for (int k = 0; k < 2; ++k) {
    auto o = opts("llama3-8b");
    o.tp = 2;
    o.layers = k == 0 ? 4 : 8;
    auto v = verify::verify_case(corpus::generate(o), "t", {});
    ASSERT_EQ(v.kind, verify::VerdictKind::verified) << v.reason << v.stage_note;
    EXPECT_GT(v.stages, 0u) << "not proved by stages: " << v.stage_note;
    EXPECT_LT(v.unique_stages, v.stages);
    distinct[k] = v.unique_stages;
  }
  EXPECT_EQ(distinct[0], distinct[1]) << "a middle layer should add no distinct stage";
}

// With pipeline stages and microbatches every layer's gradient accumulator is a
// loop carry; its slot number grows with the layers a stage holds and must not
// make each layer's stages distinct.
TEST(Stages, LayersPerPipelineStageAddNoDistinctStage) {
  size_t distinct[2];
  for (int k = 0; k < 2; ++k) {
    auto o = opts("llama3-8b");
    o.tp = 2;
    o.pp = 2;
    o.mb = 2;
    o.layers = k == 0 ? 4 : 10;
    auto v = verify::verify_case(corpus::generate(o), "t", {});
    ASSERT_EQ(v.kind, verify::VerdictKind::verified) << v.reason << v.stage_note;
    distinct[k] = v.unique_stages;
  }
  EXPECT_EQ(distinct[0], distinct[1]);
}

TEST(Stages, BugsAreNeverProvedByStages) {
  auto o = opts("llama3-8b");
  o.dp = 2;
  o.tp = 2;
  for (const char* bug : {"missing-allreduce", "missing-grad-allreduce", "tp-avg", "wrong-axis", "pow-exponent"}) {
    ir::Case c = corpus::generate(o);
    corpus::inject_bug(c, bug);
    auto v = verify::verify_case(c, "t", {});
    EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << bug;
    EXPECT_EQ(v.stages, 0u) << bug;
  }
}

TEST(Stages, CacheSkipsProvedStagesButNeverABug) {
  std::string dir = testing::TempDir() + "/parity-stage-cache";
  std::filesystem::remove_all(dir);
  auto o = opts("llama3-8b");
  o.tp = 2;
  o.layers = 4;
  verify::VerifyOptions opt;
  opt.cache_dir = dir;
  auto first = verify::verify_case(corpus::generate(o), "t", opt);
  ASSERT_EQ(first.kind, verify::VerdictKind::verified) << first.stage_note;
  EXPECT_EQ(first.cached_stages, 0u);
  auto again = verify::verify_case(corpus::generate(o), "t", opt);
  EXPECT_EQ(again.kind, verify::VerdictKind::verified);
  EXPECT_EQ(again.cached_stages, again.unique_stages);
  ir::Case bad = corpus::generate(o);
  corpus::inject_bug(bad, "missing-allreduce@layer=2");
  EXPECT_EQ(verify::verify_case(bad, "t", opt).kind, verify::VerdictKind::mismatch);
  std::filesystem::remove_all(dir);
}

// A hard-coded extent that fits only the size given (the next expert's gate
// sliced as [1, 1+3) of 4 experts) makes the reduced instance invalid. The
// sizes the failing op depends on are kept one at a time: with the expert
// count kept the rest still shrinks, and the bug is found on it.
TEST(Reduce, AnInvalidReducedInstanceKeepsTheSizeItFailsOn) {
  corpus::GenOptions g;
  g.model = "deepseek-v3-16b";
  g.dp = 2;
  g.layers = 2;
  ir::Case c = corpus::generate(g);
  corpus::inject_bug(c, "wrong-expert");
  reduce::Result r = reduce::reduce_case(c);
  ASSERT_TRUE(r.changed);
  EXPECT_TRUE(ir::validate_case(r.reduced, "r").empty());
  EXPECT_EQ(r.dims.count("E"), 0u);
  EXPECT_EQ(r.dims.count("H"), 1u);
  bool said = false;
  // Kept because its literal slice size 3 = 3E/4 would change meaning (or,
  // without that check, because the instance reduced with it does not validate).
  for (const auto& k : r.kept)
    said |= k.find("dim E kept at 4: the literal 3 in program main op slice") == 0 ||
            k.find("dim E kept at 4: the instance reduced with it does not validate") == 0;
  EXPECT_TRUE(said);
  EXPECT_EQ(verify::verify_case(c, "t", verify::VerifyOptions{}).kind, verify::VerdictKind::mismatch);
}

// A hard-coded extent that needs two sizes at once: 20 rows of an A*C = 4*6
// tensor fit neither 2*6 nor 4*2. Both are kept together (before: nothing was
// reduced), the rest still shrinks, and a wrong offset in the slice is found.
TEST(Reduce, AnExtentNeedingTwoSizesKeepsBoth) {
  auto text = [](const std::string& plan_offset) {
    return R"pb(version: 1
spec {
  name: "two"
  dims { name: "A" value: 4 } dims { name: "C" value: 6 } dims { name: "N" value: 8 }
  graph {
    inputs { name: "x" type { dtype: "f32" shape: "A" shape: "C" } }
    inputs { name: "w" type { dtype: "f32" shape: "N" } }
    outputs: "y" outputs: "s"
    ops { kind: "reshape" operands: "x" results: "xf" attrs { name: "shape" ints { v: "A*C" } } }
    ops { kind: "slice" operands: "xf" results: "y"
          attrs { name: "dim" i: "0" } attrs { name: "offset" i: "0" } attrs { name: "size" i: "20" } }
    ops { kind: "reduce_sum" operands: "w" results: "s" attrs { name: "dims" ints { v: "0" } } }
  }
}
plan {
  name: "two_dp2"
  mesh { name: "dp" size: 2 }
  dims { name: "A" value: 4 } dims { name: "C" value: 6 } dims { name: "N" value: 8 }
  programs {
    name: "dp"
    graph {
      inputs { name: "xs" type { dtype: "f32" shape: "A" shape: "C" } }
      inputs { name: "ws" type { dtype: "f32" shape: "N/dp" } }
      outputs: "z" outputs: "ps"
      ops { kind: "reshape" operands: "xs" results: "xz" attrs { name: "shape" ints { v: "A*C" } } }
      ops { kind: "slice" operands: "xz" results: "z"
            attrs { name: "dim" i: "0" } attrs { name: "offset" i: ")pb" +
           plan_offset + R"pb(" } attrs { name: "size" i: "20" } }
      ops { kind: "reduce_sum" operands: "ws" results: "ps" attrs { name: "dims" ints { v: "0" } } }
    }
  }
  placements { program: "dp" value: "xs" spec_value: "x" kind: "region"
               region { offset: "0" size: "A" } region { offset: "0" size: "C" } }
  placements { program: "dp" value: "ws" spec_value: "w" kind: "region" region { offset: "$dp*(N/dp)" size: "N/dp" } }
  placements { program: "dp" value: "z" spec_value: "y" kind: "region" region { offset: "0" size: "20" } }
  placements { program: "dp" value: "ps" spec_value: "s" kind: "partial" axes: "dp" }
}
)pb";
  };
  ir::Case c = frontend::parse_case(text("0"), "two.pbtxt");
  reduce::Result r = reduce::reduce_case(c);
  ASSERT_TRUE(r.changed);
  EXPECT_TRUE(ir::validate_case(r.reduced, "r").empty());
  EXPECT_EQ(r.dims.count("A"), 0u);
  EXPECT_EQ(r.dims.count("C"), 0u);
  ASSERT_EQ(r.dims.count("N"), 1u);
  EXPECT_EQ(r.dims.at("N").second, 4);
  bool said = false;
  for (const auto& k : r.kept) said |= k.find("dim A kept at 4: kept with the failing op's other sizes") == 0;
  EXPECT_TRUE(said);
  EXPECT_EQ(verify::verify_case(c, "t", verify::VerifyOptions{}).kind, verify::VerdictKind::verified);
  ir::Case bug = frontend::parse_case(text("1"), "two_bug.pbtxt");
  EXPECT_TRUE(reduce::reduce_case(bug).changed);
  EXPECT_EQ(verify::verify_case(bug, "t", verify::VerifyOptions{}).kind, verify::VerdictKind::mismatch);
}

// One rank's program differs (a changed constant on rank 7 of ep 16): the ep
// axis keeps 5 coordinates, which E/ep cannot divide when E is tied to other
// sizes (here by ZeRO's shards). The reduced axis then grows to 8, a divisor
// of 16, by keeping more interchangeable coordinates, and the bug is found.
TEST(Reduce, AnAxisThatDividesNothingGrowsToADivisorOfItsSize) {
  corpus::GenOptions g;
  g.model = "deepseek-v3-671b";
  g.ep = 16;
  g.dp = 2;
  g.zero = 1;
  g.layers = 4;
  ir::Case c = corpus::generate(g);
  corpus::inject_bug(c, "constant-changed@rank=7");
  reduce::Result r = reduce::reduce_case(c);
  ASSERT_TRUE(r.changed);
  EXPECT_TRUE(ir::validate_case(r.reduced, "r").empty());
  const reduce::AxisMap* ep = nullptr;
  for (const auto& m : r.axes)
    if (m.axis == "ep") ep = &m;
  ASSERT_NE(ep, nullptr);
  EXPECT_EQ(ep->to, 8);
  EXPECT_NE(std::find(ep->orig_of.begin(), ep->orig_of.end(), 7), ep->orig_of.end());  // the odd rank is kept
  EXPECT_EQ(verify::verify_case(c, "t", verify::VerifyOptions{}).kind, verify::VerdictKind::mismatch);
  // The correct plan reduces ep to 4, not 2: its token offsets read
  // `$dp*ep+$ep`, and at ep = 2 = dp a plan reading `$dp*dp+$ep` would pass.
  reduce::Result ok = reduce::reduce_case(corpus::generate(g));
  for (const auto& m : ok.axes) {
    if (m.axis == "ep") {
      EXPECT_EQ(m.to, 4);
    }
  }
}

// Sizes that differ as given stay apart in the reduced instance where an
// index reads them (reduce/distinct_sizes.h): the vocab offset of a
// vocab-parallel embedding written with H for V is right once both shrink to
// the same value, so the reduced instance alone must still show it. (Small
// plans are also run as given after a reduced VERIFIED; this test checks the
// reduced instance on its own, as for a plan too large for that run.)
namespace {
ir::Op* embedding_op(ir::Case& c) {
  return find_op(c.plan, [](const ir::Op& op) { return op.kind == "embedding" && op.attr("offset"); });
}
verify::Verdict verify_reduced(const reduce::Result& r) {
  verify::VerifyOptions o;
  o.reduce = false;
  return verify::verify_case(r.reduced, "r", o);
}
}  // namespace

TEST(Reduce, AnOffsetReadingAnotherSizeStaysWrongReduced) {
  auto o = opts("llama3-8b");
  o.dp = 2;
  o.tp = 2;
  o.dims = {{"V", 16}, {"H", 8}};
  ir::Case c = corpus::generate(o);
  ir::Op* emb = embedding_op(c);
  ASSERT_NE(emb, nullptr);
  ASSERT_EQ(std::get<ir::DimExpr>(*emb->attr("offset")).str(), "$tp*(V/tp)");
  reduce::Result ok = reduce::reduce_case(c);
  ASSERT_TRUE(ok.changed);
  EXPECT_EQ(verify_reduced(ok).kind, verify::VerdictKind::verified);
  emb->attrs["offset"] = ir::DimExpr::parse("$tp*(H/tp)");
  reduce::Result r = reduce::reduce_case(c);
  ASSERT_TRUE(r.changed) << joined(r.kept);
  const auto& d = r.reduced.spec->dims;
  EXPECT_NE(d.at("H"), d.at("V")) << joined(r.applied);
  EXPECT_EQ(verify_reduced(r).kind, verify::VerdictKind::mismatch) << joined(r.applied);
}
