// Generator features that cross programs or combine splits: the tied
// embedding's gradient all-reduce over an explicit {first stage, last stage}
// group (and the validator's matching of collectives whose group members run
// different programs), balanced CP with SP, and ZeRO sharded over dp x cp.
#include <gtest/gtest.h>

#include <functional>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "ir/validate.h"
#include "verify/check.h"

namespace parity::corpus {
namespace {

using verify::VerdictKind;

std::string diags_str(const ir::DiagList& d) {
  std::string s;
  for (const auto& x : d.items) s += x.str() + "\n";
  return s;
}

GenOptions opts(const std::string& model, const std::function<void(GenOptions&)>& f) {
  GenOptions o;
  o.model = model;
  f(o);
  return o;
}

void expect_verified(const ir::Case& c, const std::string& name) {
  ir::DiagList d = ir::validate_case(c, name);
  ASSERT_TRUE(d.empty()) << diags_str(d);
  verify::Verdict v = verify::verify_case(c, name, verify::VerifyOptions{});
  EXPECT_EQ(v.kind, VerdictKind::verified) << verify::verdict_name(v.kind) << ": " << v.reason;
}

// Every op (loop bodies included) of a graph for which `pred` holds.
void walk(ir::Graph& g, const std::function<void(ir::Op&)>& f) {
  for (auto& op : g.ops) {
    f(op);
    for (auto& r : op.regions) walk(r, f);
  }
}

ir::Op* find_op(ir::Program& p, const std::function<bool(const ir::Op&)>& pred) {
  ir::Op* hit = nullptr;
  walk(p.graph, [&](ir::Op& op) {
    if (!hit && pred(op)) hit = &op;
  });
  return hit;
}

bool is_tied_allreduce(const ir::Op& op) {
  return op.kind == "allreduce" && !op.results.empty() && op.results[0].rfind("grad.tied.", 0) == 0;
}

// ---------------------------------------------------------------------------
// Tied embedding across pipeline stages

TEST(TiedEmbedding, GradientAllReducedOverFirstAndLastStage) {
  for (int64_t pp : {2, 3}) {
    ir::Case c = generate(opts("gpt-small", [&](GenOptions& o) { o.pp = pp, o.dp = 2, o.tp = 2; }));
    const ir::Mesh& m = c.plan.mesh;
    const size_t pi = *m.axis_index("pp");
    ASSERT_EQ(c.plan.programs.size(), static_cast<size_t>(pp));
    for (auto* prog : {&c.plan.programs.front(), &c.plan.programs.back()}) {
      ir::Op* op = find_op(*prog, is_tied_allreduce);
      ASSERT_NE(op, nullptr) << prog->name;
      const auto& gs = std::get<ir::Groups>(*op->attr("groups"));
      ASSERT_EQ(gs.size(), 4u);  // one per (dp, tp) coordinate
      for (const auto& g : gs) {
        ASSERT_EQ(g.size(), 2u);
        ir::Coord a = m.coord_of(g[0]), b = m.coord_of(g[1]);
        EXPECT_EQ(a[pi], 0);
        EXPECT_EQ(b[pi], pp - 1);
        a[pi] = b[pi];
        EXPECT_EQ(a, b);  // same coordinate on every other axis
      }
      // No point-to-point exchange of the tied gradient any more.
      EXPECT_EQ(find_op(*prog,
                        [](const ir::Op& o) {
                          return o.kind == "recv" && o.results[0].find("tied") != std::string::npos;
                        }),
                nullptr);
    }
    if (pp > 2) {
      EXPECT_EQ(find_op(c.plan.programs[1], is_tied_allreduce), nullptr);
    }
    expect_verified(c, "gpt_pp" + std::to_string(pp));
  }
}

TEST(TiedEmbedding, VerifiesWithZeroAndSchedules) {
  expect_verified(
      generate(opts("gpt-small", [](GenOptions& o) { o.pp = 2, o.dp = 2, o.zero = 2, o.mb = 2; })),
      "gpt_zero2");
  expect_verified(generate(opts("gpt-small",
                                [](GenOptions& o) {
                                  o.pp = 2, o.mb = 2, o.schedule = "1f1b", o.step = Step::grads;
                                })),
                  "gpt_1f1b");
}

ir::Case tied_case() {
  return generate(
      opts("gpt-small", [](GenOptions& o) { o.pp = 2, o.tp = 2, o.step = Step::grads; }));
}

std::string first_error(const ir::Case& c) {
  ir::DiagList d = ir::validate_case(c, "x.pbtxt");
  return d.empty() ? "" : d.items[0].str();
}

TEST(TiedEmbedding, ValidatorRequiresAMatchingCollectiveInTheOtherProgram) {
  ir::Case c = tied_case();
  ASSERT_EQ(first_error(c), "");
  // The last stage drops its half of the collective.
  ir::Program& last = c.plan.programs.back();
  auto& ops = last.graph.ops;
  for (size_t i = 0; i < ops.size(); ++i)
    if (is_tied_allreduce(ops[i])) {
      ops[i] = ir::Op{"identity", {ops[i].operands[0]}, ops[i].results, {}, {}, 0, 0, ""};
      break;
    }
  std::string e = first_error(c);
  EXPECT_NE(e.find("x.pbtxt: error: program stage0, op allreduce"), std::string::npos) << e;
  EXPECT_NE(e.find("[groups]"), std::string::npos) << e;
  EXPECT_NE(e.find("rank 2 (pp=1,dp=0,tp=0)"), std::string::npos) << e;
  EXPECT_NE(e.find("runs program 'stage1', which issues no collective over that group"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("expected a matching allreduce"), std::string::npos) << e;
}

TEST(TiedEmbedding, ValidatorRequiresTheSameGroupOrder) {
  ir::Case c = tied_case();
  ir::Op* op = find_op(c.plan.programs.back(), is_tied_allreduce);
  auto gs = std::get<ir::Groups>(*op->attr("groups"));
  for (auto& g : gs) std::swap(g[0], g[1]);
  op->attrs["groups"] = gs;
  std::string e = first_error(c);
  EXPECT_NE(e.find("lists these ranks in another order"), std::string::npos) << e;
}

TEST(TiedEmbedding, ScheduleMatchesKindAndPositionAcrossPrograms) {
  {
    ir::Case c = tied_case();
    find_op(c.plan.programs.back(), is_tied_allreduce)->attrs["reduce"] = std::string("max");
    std::string e = first_error(c);
    EXPECT_NE(e.find("program stage1"), std::string::npos) << e;
    EXPECT_NE(e.find("collective #1 over the explicit group {0 (pp=0,dp=0,tp=0), 2 "
                     "(pp=1,dp=0,tp=0)} is allreduce "
                     "(reduce=\"max\")"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("expected allreduce (reduce=\"sum\") of f32["), std::string::npos) << e;
  }
  {
    // The first stage issues the collective twice: the second has no partner.
    ir::Case c = tied_case();
    auto& ops = c.plan.programs.front().graph.ops;
    for (size_t i = 0; i < ops.size(); ++i)
      if (is_tied_allreduce(ops[i])) {
        ir::Op again = ops[i];
        again.results = {ops[i].results[0] + ".again"};
        ops.insert(ops.begin() + static_cast<long>(i) + 1, again);
        break;
      }
    std::string e = first_error(c);
    EXPECT_NE(e.find("collective #2 over the explicit group"), std::string::npos) << e;
  }
}

TEST(TiedEmbedding, DriftingCopiesAreRejected) {
  for (const char* bug : {"tied-updated-apart", "tied-wrong-group"}) {
    GenOptions o = opts("gpt-small", [](GenOptions& g) {
      g.pp = 2, g.tp = 2, g.step = Step::grads, g.marks = "forward";
    });
    ir::Case c = generate(o);
    inject_bug(c, bug);
    ir::DiagList d = ir::validate_case(c, bug);
    ASSERT_TRUE(d.empty()) << bug << ": " << diags_str(d);
    verify::Verdict v = verify::verify_case(c, bug, verify::VerifyOptions{});
    EXPECT_EQ(v.kind, VerdictKind::mismatch)
        << bug << ": " << verify::verdict_name(v.kind) << ": " << v.reason;
  }
  ir::Case no_tp = generate(opts("gpt-small", [](GenOptions& g) { g.pp = 2; }));
  EXPECT_THROW(inject_bug(no_tp, "tied-wrong-group"), ir::InvalidInput);
}

// ---------------------------------------------------------------------------
// Balanced CP with SP

TEST(ContextParallel, BalancedWithSequenceParallel) {
  for (const std::string m : {"llama3-8b", "gpt-small", "deepseek-v3-16b"})
    expect_verified(
        generate(
            opts(m, [](GenOptions& o) { o.cp = 2, o.cp_balanced = true, o.tp = 2, o.sp = true; })),
        m + "_cp2_balanced_tp2_sp");
  // Balanced CP with plain TP: a partial sum over tp of a two-chunk value.
  expect_verified(
      generate(opts("llama3-8b", [](GenOptions& o) { o.cp = 2, o.cp_balanced = true, o.tp = 2; })),
      "cp2_balanced_tp2");
  // tp 4: two SP pieces per chunk.
  ir::Case c = generate(opts("llama3-8b", [](GenOptions& o) {
    o.cp = 2, o.cp_balanced = true, o.tp = 4, o.sp = true, o.step = Step::grads, o.layers = 1;
  }));
  EXPECT_EQ(c.plan.dims.at("S") % 16, 0);
  expect_verified(c, "cp2_balanced_tp4_sp");
  // An odd tp would cut a piece across the rank's two chunks.
  EXPECT_THROW(
      generate(opts("llama3-8b",
                    [](GenOptions& o) { o.cp = 2, o.cp_balanced = true, o.tp = 3, o.sp = true; })),
      ir::InvalidInput);
}

// ---------------------------------------------------------------------------
// ZeRO over dp x cp

TEST(Zero, ShardsOverDataAndContextParallel) {
  for (int z : {1, 2, 3}) {
    ir::Case c =
        generate(opts("llama3-8b", [&](GenOptions& o) { o.dp = 2, o.cp = 2, o.zero = z; }));
    // Shards and their collectives are over the dp x cp group.
    int64_t over_both = 0;
    walk(c.plan.programs[0].graph, [&](ir::Op& op) {
      if (op.kind != "reduce_scatter" && op.kind != "allgather") return;
      const ir::Attr* a = op.attr("axes");
      if (a && std::get<ir::Strings>(*a) == ir::Strings{"dp", "cp"}) ++over_both;
    });
    EXPECT_GT(over_both, 0) << "zero " << z;
    bool quarter = false;
    for (const auto& pl : c.plan.placements)
      if (pl.spec_value == "new.m.l0.wq")
        for (const auto& r : pl.region) quarter |= r.offset.str().find("$cp") != std::string::npos;
    EXPECT_TRUE(quarter) << "zero " << z << ": optimizer state not sharded over cp";
    expect_verified(c, "dp2_cp2_zero" + std::to_string(z));
  }
  // cp alone shards too.
  expect_verified(generate(opts("llama3-8b", [](GenOptions& o) { o.cp = 2, o.zero = 1; })),
                  "cp2_zero1");
  expect_verified(
      generate(opts("gpt-small", [](GenOptions& o) { o.dp = 2, o.cp = 2, o.pp = 2, o.zero = 2; })),
      "gpt_dp2_cp2_pp2_zero2");
}

}  // namespace
}  // namespace parity::corpus
