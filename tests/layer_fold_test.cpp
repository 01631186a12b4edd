// The layer fold (reduce/layer_fold.h): a case whose pipeline stages write
// the same layer out many times is proved through a folded case; a layer that
// differs is kept, and a case that breaks a condition is not folded.
#include "reduce/layer_fold.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <regex>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "frontend/proto/case_io.h"
#include "ir/validate.h"
#include "tests/lib/corpus_path.h"
#include "tests/lib/layered_plan.h"
#include "verify/check.h"
#include "verify/staged.h"

using namespace parity;

namespace {

using test_plans::llama16;

struct Folded {
  ir::TypeMap spec_types;
  std::map<std::string, ir::TypeMap> types;
  reduce::LayerFold fold;
};

Folded fold_of(const ir::Case& c) {
  Folded f;
  ir::DiagList d = ir::validate_case(c, "t", ir::kScheduleBudget, 0, &f.spec_types, &f.types);
  EXPECT_TRUE(d.empty()) << d.items[0].message;
  f.fold = reduce::fold_layers(c, f.spec_types, f.types);
  return f;
}

bool defines(const ir::Graph& g, const std::string& v) {
  for (const auto& op : g.ops) {
    if (std::find(op.results.begin(), op.results.end(), v) != op.results.end()) return true;
    for (const auto& b : op.regions)
      if (defines(b, v)) return true;
  }
  return false;
}

}  // namespace

// Each pipeline stage of 8 layers keeps its first two (the embedding's reader
// differs from the layers after it) or its first: the last, which sends its
// output, is an image too, its send kept beside the stub it sends. The folded
// case is itself a valid case and proves with no more distinct stages.
TEST(LayerFold, InteriorLayersFoldAndTheFoldedCaseProves) {
  ir::Case c = corpus::generate(llama16());
  Folded f = fold_of(c);
  ASSERT_TRUE(f.fold.folded) << f.fold.summary;
  EXPECT_EQ(f.fold.layers, 16u);
  EXPECT_EQ(f.fold.dropped, 12u) << f.fold.summary;  // 2..7 and 9..14
  EXPECT_NE(f.fold.summary.find("2..7 as 1, 9..14 as 8"), std::string::npos) << f.fold.summary;
  const ir::Case& k = f.fold.kase;
  EXPECT_FALSE(defines(k.plan.programs[0].graph, "l4.attn.q"));
  EXPECT_FALSE(defines(k.plan.programs[0].graph, "l7.attn.q"));
  EXPECT_TRUE(defines(k.plan.programs[0].graph, "l1.attn.q"));
  EXPECT_TRUE(defines(k.plan.programs[1].graph, "l8.attn.q"));
  // Stubs stand for the dropped values kept ops read, and only those are
  // assumed: layer 2's backward computes the gradient layer 1 reads.
  EXPECT_TRUE(f.fold.assumed.count("d_l1.out"));
  EXPECT_FALSE(f.fold.assumed.count("l1.out"));
  // Layer 7's output is sent to stage 1, which reads it: its stage is built
  // open (the spec value free) for the received copy alone.
  EXPECT_TRUE(f.fold.assumed.count("l7.out"));
  ASSERT_TRUE(f.fold.open.count("l7.out"));
  EXPECT_EQ(f.fold.open.at("l7.out"),
            (std::set<std::pair<std::string, std::string>>{{"stage1", "l7.out"}}));
  EXPECT_EQ(f.fold.open.size(), 1u);
  ir::DiagList d = ir::validate_case(k, "folded");
  EXPECT_TRUE(d.empty()) << (d.empty() ? "" : d.items[0].message);

  verify::StageOptions so;
  so.assumed = &f.fold.assumed;
  so.open = &f.fold.open;
  auto folded = verify::prove_by_stages(k, so);
  EXPECT_TRUE(folded.proved) << folded.reason;
  auto whole = verify::prove_by_stages(c, verify::StageOptions{});
  EXPECT_TRUE(whole.proved) << whole.reason;
  EXPECT_LE(folded.unique, whole.unique);
  EXPECT_LT(folded.stages, whole.stages);

  verify::VerifyOptions vo;
  auto v = verify::verify_case(c, "t", vo);
  EXPECT_EQ(v.kind, verify::VerdictKind::verified);
  EXPECT_TRUE(std::any_of(v.reductions.begin(), v.reductions.end(),
                          [](const auto& r) { return r.find("layers 16 -> 4") == 0; }));
}

// A bug in one interior layer breaks its run: that layer is kept, and the
// verdict is the counterexample, wherever the layer sits.
TEST(LayerFold, ALayerThatDiffersIsKeptAndItsBugFound) {
  for (int layer : {2, 4, 6, 7, 8, 11, 14}) {
    ir::Case c = corpus::generate(llama16());
    corpus::inject_bug(c, "missing-allreduce@layer=" + std::to_string(layer));
    Folded f = fold_of(c);
    if (f.fold.folded) {
      bool kept = false;
      for (const auto& p : f.fold.kase.plan.programs)
        kept |= defines(p.graph, "l" + std::to_string(layer) + ".attn.q");
      EXPECT_TRUE(kept) << "layer " << layer << ": " << f.fold.summary;
    }
    auto v = verify::verify_case(c, "t", {});
    EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << "layer " << layer;
  }
}

// A stage's last layer folds away with the send beside it kept: a send of
// the wrong value (the residual before the MLP, placed too) is still the
// image of its neighbours' layers, so what proves the transfer is the open
// stage of the received copy, whose spec value is free.
TEST(LayerFold, AWrongValueSentFromAFoldedLastLayerIsFound) {
  ir::Case c = corpus::generate(llama16());
  bool changed = false;
  std::function<void(ir::Graph&)> walk = [&](ir::Graph& g) {
    for (auto& op : g.ops) {
      if (op.kind == "send" && op.operands.size() == 1 && op.operands[0] == "l7.out") {
        op.operands[0] = "l7.attn.res";
        changed = true;
      }
      for (auto& b : op.regions) walk(b);
    }
  };
  walk(c.plan.programs[0].graph);
  ASSERT_TRUE(changed);
  Folded f = fold_of(c);
  ASSERT_TRUE(f.fold.folded) << f.fold.summary;
  EXPECT_FALSE(defines(f.fold.kase.plan.programs[0].graph, "l7.attn.q"));
  EXPECT_TRUE(f.fold.open.count("l7.out"));
  verify::StageOptions so;
  so.assumed = &f.fold.assumed;
  so.open = &f.fold.open;
  EXPECT_FALSE(verify::prove_by_stages(f.fold.kase, so).proved);
  auto v = verify::verify_case(c, "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
}

// A send or receive is glue; a layer that reads an unplaced received value
// (ring attention's chunks) is kept, not folded: its cone would stop at a
// value no placement seeds. Here stage 1's layers 9..14 read a second copy
// of layer 7's output, received unplaced, where layer 8's output is meant.
TEST(LayerFold, ALayerReadingAnUnplacedReceivedValueIsKept) {
  ir::Case c = corpus::generate(llama16());
  auto body = [](ir::Program& p) -> ir::Graph& {
    for (auto& op : p.graph.ops)
      if (op.kind == "loop") return op.regions[0];
    throw std::runtime_error("no loop");
  };
  ir::Graph& send_g = body(c.plan.programs[0]);
  ir::Graph& recv_g = body(c.plan.programs[1]);
  auto find = [](ir::Graph& g, const std::string& kind, const std::string& v, bool operand) {
    for (size_t k = 0; k < g.ops.size(); ++k) {
      const auto& names = operand ? g.ops[k].operands : g.ops[k].results;
      if (g.ops[k].kind == kind && !names.empty() && names[0] == v) return k;
    }
    throw std::runtime_error("no " + kind + " of " + v);
  };
  const size_t s_at = find(send_g, "send", "l7.out", true);
  const size_t r_at = find(recv_g, "recv", "l7.out", false);
  const ir::Op send = send_g.ops[s_at], recv = recv_g.ops[r_at];
  for (int i = 14; i >= 9; --i) {
    const ir::DimExpr tag = ir::DimExpr::parse("$mb+" + std::to_string(700 + i));
    ir::Op s2 = send, r2 = recv;
    s2.attrs["tag"] = tag;
    r2.attrs["tag"] = tag;
    r2.results = {"rx.l" + std::to_string(i)};
    send_g.ops.insert(send_g.ops.begin() + static_cast<long>(s_at) + 1, s2);
    recv_g.ops.insert(recv_g.ops.begin() + static_cast<long>(r_at) + 1, r2);
  }
  for (int i = 9; i <= 14; ++i) {
    ir::Op& res = recv_g.ops[find(recv_g, "add", "l" + std::to_string(i) + ".attn.res", false)];
    ASSERT_EQ(res.operands[0], "l" + std::to_string(i - 1) + ".out");
    res.operands[0] = "rx.l" + std::to_string(i);
  }
  Folded f = fold_of(c);
  ASSERT_TRUE(f.fold.folded) << f.fold.summary;
  for (int i = 9; i <= 14; ++i)
    EXPECT_TRUE(defines(f.fold.kase.plan.programs[1].graph, "l" + std::to_string(i) + ".attn.q")) << i;
  EXPECT_FALSE(defines(f.fold.kase.plan.programs[0].graph, "l4.attn.q"));
  auto v = verify::verify_case(c, "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::mismatch) << v.reason;
}

// A layer whose ops read another layer's unplaced values has a cone that
// leaves it: the case is not folded, and says why.
TEST(LayerFold, ACrossLayerReadOfAnUnplacedValueIsNotFolded) {
  ir::Case c = corpus::generate(llama16());
  const std::regex layer_out("l[0-9]+\\.out");
  auto& pl = c.plan.placements;
  pl.erase(
      std::remove_if(pl.begin(), pl.end(),
                     [&](const ir::Placement& p) { return std::regex_match(p.value, layer_out); }),
      pl.end());
  Folded f = fold_of(c);
  EXPECT_FALSE(f.fold.folded);
  EXPECT_NE(f.fold.summary.find("is not of its layer"), std::string::npos) << f.fold.summary;
  auto v = verify::verify_case(c, "t", {});
  EXPECT_EQ(v.kind, verify::VerdictKind::verified);
  EXPECT_TRUE(std::any_of(v.kept.begin(), v.kept.end(),
                          [](const auto& k) { return k.find("layers not folded") == 0; }));
}

// Without intermediate placements every layer's backward runs into the
// next: no layer is an image of another and nothing is folded.
TEST(LayerFold, APlanPlacedOnlyAtItsEndsIsNotFolded) {
  corpus::GenOptions o = llama16();
  o.marks = "io";
  Folded f = fold_of(corpus::generate(o));
  EXPECT_FALSE(f.fold.folded) << f.fold.summary;
}

// The fold can be turned off; the verdict is the same.
TEST(LayerFold, NoFoldGivesTheSameVerdict) {
  ir::Case c = corpus::generate(llama16());
  verify::VerifyOptions vo;
  vo.fold = false;
  auto v = verify::verify_case(c, "t", vo);
  EXPECT_EQ(v.kind, verify::VerdictKind::verified);
  EXPECT_FALSE(std::any_of(v.reductions.begin(), v.reductions.end(),
                           [](const auto& r) { return r.find("layers") == 0; }));
}

// A constant changed in one interior layer only (same ops, same names): the
// attribute comparison keeps that layer, and the change is found.
TEST(LayerFold, AConstantChangedInOneDroppableLayerIsFound) {
  ir::Case c = corpus::generate(llama16());
  bool changed = false;
  for (auto& prog : c.plan.programs)
    for (auto& op : prog.graph.ops)
      if (op.kind == "loop")
        for (auto& inner : op.regions[0].ops)
          if (inner.kind == "scale" && !inner.results.empty() &&
              inner.results[0] == "l5.attn.scaled") {
            inner.attrs["factor"] = 0.5;
            changed = true;
          }
  ASSERT_TRUE(changed);
  Folded f = fold_of(c);
  ASSERT_TRUE(f.fold.folded) << f.fold.summary;  // the other runs still fold
  EXPECT_TRUE(defines(f.fold.kase.plan.programs[0].graph, "l5.attn.scaled")) << f.fold.summary;
  EXPECT_EQ(verify::verify_case(c, "t", {}).kind, verify::VerdictKind::mismatch);
}

// One layer a pipeline stage leaves nothing to drop: the analysis is not
// even run, and nothing is said. Three a stage fold to the first of each.
TEST(LayerFold, TooFewLayersAStageAreNotAnalysed) {
  corpus::GenOptions o = llama16();
  o.layers = 2;
  Folded f = fold_of(corpus::generate(o));
  EXPECT_FALSE(f.fold.folded);
  EXPECT_TRUE(f.fold.summary.empty()) << f.fold.summary;
  o.layers = 6;
  Folded three = fold_of(corpus::generate(o));
  EXPECT_TRUE(three.fold.folded);
  EXPECT_NE(three.fold.summary.find("layers 6 -> 4 (the others proved as exact images of a kept layer: 2 as 1, 4 as 3;"),
            std::string::npos)
      << three.fold.summary;
}

// A wrong placement on one layer's loop-carried accumulator (a partial sum
// over dp declared a whole region) is never folded away.
TEST(LayerFold, AWrongPlacementOnOneLayersAccumulatorIsFound) {
  ir::Case c = corpus::generate(llama16());
  bool changed = false;
  for (auto& p : c.plan.placements)
    if (p.program == "stage0" && p.value == "grad.local.l4.wq" &&
        p.kind == ir::PlacementKind::partial) {
      p.kind = ir::PlacementKind::region;
      p.axes.clear();
      changed = true;
    }
  ASSERT_TRUE(changed);
  EXPECT_EQ(verify::verify_case(c, "t", {}).kind, verify::VerdictKind::mismatch);
}

// A send between a layer's collectives and their images in the
// representative (here an extra activation exchange in the middle of the
// first stage's forward) could let dropping those collectives hide a
// deadlock: the layers past the send are kept, those before it still fold,
// and the plan still verifies.
TEST(LayerFold, ACollectivePastASendFromItsImageKeepsItsLayer) {
  ir::Case c = corpus::generate(llama16());
  auto loop_body = [&](ir::Program& p) -> ir::Graph& {
    for (auto& op : p.graph.ops)
      if (op.kind == "loop") return op.regions[0];
    throw std::runtime_error("no loop in " + p.name);
  };
  ir::Graph& first = loop_body(c.plan.programs[0]);
  auto at = std::find_if(first.ops.begin(), first.ops.end(), [](const ir::Op& op) {
    return !op.results.empty() && op.results[0] == "l4.attn.norm";
  });
  ASSERT_NE(at, first.ops.end());
  ir::Op send;
  send.kind = "send";
  send.operands = {"embed.out"};
  send.attrs["peer"] = ir::Coords{{"pp", ir::DimExpr::parse("$pp+1")}};
  send.attrs["tag"] = ir::DimExpr::parse("$mb+2000");
  first.ops.insert(at, send);
  ir::Op recv;
  recv.kind = "recv";
  recv.results = {"extra.embed"};
  recv.attrs["peer"] = ir::Coords{{"pp", ir::DimExpr::parse("$pp-1")}};
  recv.attrs["tag"] = ir::DimExpr::parse("$mb+2000");
  recv.attrs["shape"] = ir::Dims{ir::DimExpr::parse("B/dp/M"), ir::DimExpr::parse("S"),
                                 ir::DimExpr::parse("H")};
  ir::Graph& second = loop_body(c.plan.programs[1]);
  second.ops.insert(second.ops.begin(), recv);

  Folded f = fold_of(c);
  ASSERT_TRUE(f.fold.folded) << f.fold.summary;
  const ir::Graph& g = f.fold.kase.plan.programs[0].graph;
  EXPECT_FALSE(defines(g, "l2.attn.q")) << f.fold.summary;
  EXPECT_FALSE(defines(g, "l3.attn.q")) << f.fold.summary;
  for (const char* kept : {"l4.attn.q", "l5.attn.q", "l6.attn.q"})
    EXPECT_TRUE(defines(g, kept)) << kept << ": " << f.fold.summary;
  EXPECT_FALSE(defines(f.fold.kase.plan.programs[1].graph, "l12.attn.q")) << f.fold.summary;
  EXPECT_EQ(verify::verify_case(c, "t", {}).kind, verify::VerdictKind::verified);
}

// The fold comes before the reduction: the folded case is what is reduced
// (its mesh and dims), and the verdict says both.
TEST(LayerFold, TheFoldedCaseIsWhatIsReduced) {
  corpus::GenOptions o = llama16();
  o.dp = 4;
  o.mb = 4;
  ir::Case c = corpus::generate(o);
  auto v = verify::verify_case(c, "t", {});
  ASSERT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  auto has = [&](const char* prefix) {
    return std::any_of(v.reductions.begin(), v.reductions.end(),
                       [&](const auto& r) { return r.find(prefix) == 0; });
  };
  EXPECT_TRUE(has("mesh axis dp 4 -> 2"));
  EXPECT_TRUE(has("layers 16 -> 4"));
  // A stub is a `fill` sent with tag `$mb`: a tag selects no data, so the
  // microbatch count still shrinks.
  EXPECT_TRUE(has("dim M 4 -> 2"));
  EXPECT_GT(v.fold_seconds, 0);
  EXPECT_EQ(v.verified_ranks, 8);  // pp 2, dp 4 -> 2, tp 2
}

// The folded case's stubs take their types from the plan as given, so those
// types must stay symbolic: MLA's backward pads a gradient by `KVL`, and a
// pad typed `DR+4` (KVL evaluated) would make every size equal to 4 look
// like a hard-coded literal and stop the reduction of the folded case.
TEST(LayerFold, TheFoldedCaseOfADeepSeekPlanReducesItsDims) {
  corpus::GenOptions o = llama16();
  o.model = "deepseek-v3-16b";
  auto v = verify::verify_case(corpus::generate(o), "t", {});
  ASSERT_EQ(v.kind, verify::VerdictKind::verified) << v.reason;
  // KVL stops at 3: at 2 it would equal DR, the size of the slice at offset
  // KVL. E stops at 3: at 2 the router's top-2 would select every expert.
  for (const char* want : {"dim KVL 4 -> 3", "dim E 4 -> 3", "layers 16 -> 4"})
    EXPECT_TRUE(std::any_of(v.reductions.begin(), v.reductions.end(),
                            [&](const auto& r) { return r.find(want) == 0; }))
        << want;
}

// Which partial sum a partial placement joins is its position among its
// program's partials of the same region (ir::partial_ordinals): a layer whose
// two partials are listed in swapped order in one program is not an image of
// the others and is kept (it was once dropped, a false VERIFIED on 128 ranks).
TEST(LayerFold, APartialOrdinalSwappedInOneLayerKeepsIt) {
  Folded bug = fold_of(frontend::read_case(test_corpus::case_path(
      "fold/fold_bug_partial_ordinal_swapped_one_layer.pbtxt")));
  ASSERT_TRUE(bug.fold.folded) << bug.fold.summary;
  EXPECT_TRUE(defines(bug.fold.kase.plan.programs.at(1).graph, "grad.l3.wq")) << bug.fold.summary;
  Folded ok = fold_of(frontend::read_case(test_corpus::case_path(
      "fold/fold_ok_partial_ordinals_mpmd.pbtxt")));
  ASSERT_TRUE(ok.fold.folded) << ok.fold.summary;
  EXPECT_FALSE(defines(ok.fold.kase.plan.programs.at(1).graph, "grad.l3.wq")) << ok.fold.summary;
}

// A glue op reading one partial of a dropped layer keeps it as a stub; were
// the layer's other partials dropped, the stub would be numbered anew and
// pair with another program's other partial (a false VERIFIED on 128
// ranks). A partial sum is kept whole, each placement with its ordinal, or
// the case is not folded.
TEST(LayerFold, AStubKeepsItsPartialSumWholeOrTheFoldIsRefused) {
  Folded bug = fold_of(frontend::read_case(test_corpus::case_path(
      "fold/fold_bug_glue_reads_mixed_partial_ordinals_mpmd.pbtxt")));
  EXPECT_FALSE(bug.fold.folded);
  EXPECT_NE(bug.fold.summary.find("would number it 0"), std::string::npos) << bug.fold.summary;
  Folded ok = fold_of(frontend::read_case(test_corpus::case_path(
      "fold/fold_ok_glue_reads_same_partial_ordinal_mpmd.pbtxt")));
  EXPECT_TRUE(ok.fold.folded) << ok.fold.summary;
}
