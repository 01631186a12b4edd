// The generator (`parity gen`): every supported model x parallelism plan is
// well formed and VERIFIED against its spec; every bug injector's output is
// not; the anchor configurations generate quickly into small files; and every
// injector has a corpus case.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "corpus/models.h"
#include "frontend/proto/case_io.h"
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

GenOptions opts(const std::string& model) {
  GenOptions o;
  o.model = model;
  return o;
}

// ---------------------------------------------------------------------------
// Correct plans

struct Combo {
  std::string name;
  GenOptions o;
};

std::vector<Combo> combos() {
  std::vector<Combo> v;
  auto add = [&](const std::string& model, const std::function<void(GenOptions&)>& f, const std::string& tag) {
    GenOptions o = opts(model);
    f(o);
    v.push_back({model + "_" + tag, o});
  };
  for (const std::string m : {"llama3-8b", "deepseek-v3-16b", "gpt-small"}) {
    add(m, [](GenOptions&) {}, "single");
    add(m, [](GenOptions& o) { o.dp = 2; }, "dp2");
    add(m, [](GenOptions& o) { o.mb = 2; }, "mb2");
    add(m, [](GenOptions& o) { o.tp = 2; }, "tp2");
    add(m, [](GenOptions& o) { o.tp = 2, o.sp = true; }, "tp2_sp");
    add(m, [](GenOptions& o) { o.cp = 2; }, "cp2");
    add(m, [](GenOptions& o) { o.pp = 2, o.mb = 2; }, "pp2_mb2");
    add(m, [](GenOptions& o) { o.dp = 2, o.zero = 1; }, "dp2_zero1");
    add(m, [](GenOptions& o) { o.dp = 2, o.zero = 2; }, "dp2_zero2");
    add(m, [](GenOptions& o) { o.dp = 2, o.zero = 3; }, "dp2_zero3");
    add(m, [](GenOptions& o) { o.cp = 2, o.cp_balanced = true; }, "cp2_balanced");
    // Inside the microbatch loop each rank's two chunks are placed apart too.
    add(m, [](GenOptions& o) { o.cp = 2, o.cp_balanced = true, o.mb = 2; }, "cp2_balanced_mb2");
    add(m, [](GenOptions& o) { o.pp = 2, o.mb = 3, o.schedule = "1f1b"; }, "pp2_mb3_1f1b");
    add(m, [](GenOptions& o) { o.pp = 2, o.vpp = 2, o.mb = 2, o.schedule = "interleaved"; },
        "pp2_vpp2_mb2_interleaved");
    add(m, [](GenOptions& o) { o.dp = 2, o.tp = 2, o.pp = 2, o.mb = 2; }, "dp2_tp2_pp2_mb2");
    add(m, [](GenOptions& o) { o.tp = 2, o.sp = true, o.cp = 2, o.dp = 2; }, "dp2_tp2_sp_cp2");
  }
  add("llama3-8b", [](GenOptions& o) { o.pp = 4, o.mb = 2; }, "pp4_mb2");
  add("llama3-8b", [](GenOptions& o) { o.pp = 4, o.mb = 4, o.schedule = "1f1b", o.step = Step::grads; },
      "pp4_mb4_1f1b");
  add("llama3-8b",
      [](GenOptions& o) { o.pp = 2, o.vpp = 3, o.mb = 2, o.schedule = "interleaved", o.step = Step::grads; },
      "pp2_vpp3_mb2_interleaved");
  add("llama3-8b",
      [](GenOptions& o) { o.dp = 2, o.pp = 2, o.mb = 2, o.zero = 3, o.schedule = "1f1b", o.step = Step::grads; },
      "dp2_pp2_mb2_zero3_1f1b");
  add("llama3-8b", [](GenOptions& o) { o.dp = 2, o.mb = 2, o.zero = 2; }, "dp2_mb2_zero2");
  add("llama3-8b", [](GenOptions& o) { o.cp = 4, o.cp_balanced = true, o.step = Step::grads; }, "cp4_balanced");
  add("llama3-8b", [](GenOptions& o) { o.cp = 2, o.cp_balanced = true, o.tp = 2, o.dp = 2, o.pp = 2, o.mb = 4; },
      "dp2_tp2_cp2_balanced_pp2_mb4");
  add("gpt-small", [](GenOptions& o) { o.pp = 2, o.vpp = 2, o.mb = 2, o.dp = 2, o.schedule = "interleaved"; },
      "pp2_vpp2_mb2_dp2_interleaved_tied");
  add("llama3-8b", [](GenOptions& o) { o.dp = 2, o.pp = 2, o.mb = 2, o.zero = 1, o.tp = 2, o.sp = true; },
      "dp2_tp2_sp_pp2_mb2_zero1");
  add("deepseek-v3-671b", [](GenOptions& o) { o.ep = 2; }, "ep2");
  add("deepseek-v3-671b", [](GenOptions& o) { o.ep = 2, o.dp = 2, o.tp = 2; }, "dp2_ep2_tp2");
  add("deepseek-v3-671b", [](GenOptions& o) { o.ep = 2, o.pp = 2, o.mb = 2; }, "ep2_pp2_mb2");
  add("deepseek-v3-671b", [](GenOptions& o) { o.ep = 2, o.dp = 2, o.zero = 1; }, "dp2_ep2_zero1");
  add("gpt-small", [](GenOptions& o) { o.pp = 2, o.dp = 2, o.zero = 1; }, "pp2_dp2_zero1");
  add("llama3-8b", [](GenOptions& o) { o.dp = 2, o.step = Step::grads; }, "dp2_grads");
  add("llama3-8b", [](GenOptions& o) { o.tp = 2, o.step = Step::clip; }, "tp2_clip");
  return v;
}

class GenMatrix : public testing::TestWithParam<Combo> {};

TEST_P(GenMatrix, ValidatesAndVerifies) {
  ir::Case c = generate(GetParam().o);
  ir::DiagList d = ir::validate_case(c, GetParam().name);
  ASSERT_TRUE(d.empty()) << diags_str(d);
  verify::Verdict v = verify::verify_case(c, GetParam().name, verify::VerifyOptions{});
  EXPECT_EQ(v.kind, VerdictKind::verified) << verify::verdict_name(v.kind) << ": " << v.reason;
  EXPECT_EQ(v.by_smt, 0u) << "a correct generated plan should match by canonical forms";
}

TEST_P(GenMatrix, RoundTripsThroughText) {
  ir::Case c = generate(GetParam().o);
  std::string text = frontend::write_case_string(c, frontend::Format::text);
  EXPECT_TRUE(frontend::parse_case(text, "gen", frontend::Format::text) == c);
}

INSTANTIATE_TEST_SUITE_P(All, GenMatrix, testing::ValuesIn(combos()),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// ---------------------------------------------------------------------------
// Checked-in cases

// Bug plans stop after the gradients and place only forward activations: a
// mismatch is found at once, and obligations that a bug makes differ only
// symbolically are kept out of the solver's way.
GenOptions bug_base(const std::string& model, const std::function<void(GenOptions&)>& f) {
  GenOptions o = opts(model);
  o.step = Step::grads;
  o.marks = "forward";
  f(o);
  return o;
}

// Every bug injector has a case among the corpus manifests (`# gen: ... --bug NAME`),
// whose expected verdict ctest checks (corpus/cases/injected-bugs).
TEST(Bugs, EveryInjectorHasACorpusCase) {
  std::set<std::string> used;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(PARITY_SOURCE_DIR) + "/corpus/cases")) {
    if (e.path().extension() != ".gen") continue;
    std::ifstream f(e.path());
    for (std::string line; std::getline(f, line) && line.rfind("#", 0) == 0;) {
      if (line.rfind("# gen:", 0) != 0) continue;
      std::istringstream words(line.substr(6));
      for (std::string w, prev; words >> w; prev = w)
        if (prev == "--bug") used.insert(parse_bug(w).name);
    }
  }
  for (const auto& b : bugs())
    EXPECT_TRUE(used.count(b.name)) << b.name << " has no case under corpus/cases/injected-bugs";
}

// Load-balanced chunks: the RoPE table is two slices concatenated, and both
// slices take the bug (it once put an offset on the concat: INVALID).
TEST(Bugs, CpRopeOffsetAppliesToLoadBalancedChunks) {
  GenOptions o;
  o.model = "llama3-8b";
  o.cp = 2;
  o.cp_balanced = true;
  ir::Case c = generate(o);
  inject_bug(c, "cp-rope-offset");
  EXPECT_TRUE(ir::validate_case(c, "t").empty());
  EXPECT_EQ(verify::verify_case(c, "t", {}).kind, verify::VerdictKind::mismatch);
}

TEST(Bugs, RankSiteSplitsTheProgram) {
  GenOptions o = bug_base("llama3-8b", [](GenOptions& g) { g.dp = 2, g.tp = 2; });
  ir::Case c = generate(o);
  inject_bug(c, "constant-changed@rank=3");
  // Rank 3 gets its own program; the others are covered by the rest.
  ASSERT_NE(c.plan.program_of(3), nullptr);
  EXPECT_EQ(c.plan.program_of(3)->name, "main.rank3");
  for (int64_t r = 0; r < 3; ++r) {
    ASSERT_NE(c.plan.program_of(r), nullptr);
    EXPECT_NE(c.plan.program_of(r)->name, "main.rank3");
  }
  EXPECT_TRUE(ir::validate_case(c, "rank").empty());
}

TEST(Bugs, MicrobatchSiteConditionsOnTheLoopIndex) {
  GenOptions o = bug_base("llama3-8b", [](GenOptions& g) { g.tp = 2, g.mb = 2; });
  ir::Case c = generate(o);
  ir::Case wrong = c;
  EXPECT_THROW(inject_bug(wrong, "missing-allreduce@mb=2"), ir::InvalidInput);  // mb is 0..1
  inject_bug(c, "missing-allreduce@mb=1");
  EXPECT_TRUE(ir::validate_case(c, "mb").empty());
  // The buggy value is selected by an indicator sliced at $mb.
  bool sliced = false;
  for (const auto& op : c.plan.programs[0].graph.ops)
    for (const auto& r : op.regions)
      for (const auto& inner : r.ops)
        if (inner.kind == "slice" && inner.attr("offset") &&
            std::get<ir::DimExpr>(*inner.attr("offset")).str() == "$mb")
          sliced = true;
  EXPECT_TRUE(sliced);
  verify::Verdict v = verify::verify_case(c, "mb", verify::VerifyOptions{});
  EXPECT_EQ(v.kind, VerdictKind::mismatch) << v.reason;
}

// In a sequential microbatch loop the swapped tag makes the stages wait on
// each other (a structural error); in 1F1B it swaps the data (the checked-in
// case, a mismatch).
TEST(Bugs, TagSwapInALoopIsADeadlock) {
  ir::Case c = generate(bug_base("llama3-8b", [](GenOptions& g) { g.pp = 2, g.mb = 2; }));
  inject_bug(c, "pp-tag-swap");
  ir::DiagList d = ir::validate_case(c, "tags");
  ASSERT_FALSE(d.empty());
  EXPECT_NE(d.items[0].message.find("deadlock"), std::string::npos) << d.items[0].message;
  ir::Case one = generate(bug_base("llama3-8b", [](GenOptions& g) { g.pp = 2; }));
  EXPECT_THROW(inject_bug(one, "pp-tag-swap"), ir::InvalidInput);  // one microbatch
}

TEST(Bugs, RejectsWhatDoesNotApply) {
  ir::Case c = generate(opts("llama3-8b"));
  EXPECT_THROW(inject_bug(c, "missing-allreduce"), ir::InvalidInput);  // no tp
  EXPECT_THROW(inject_bug(c, "accumulator-reset"), ir::InvalidInput);  // one microbatch: a no-op
  EXPECT_THROW(inject_bug(c, "no-such-bug"), ir::InvalidInput);
  EXPECT_THROW(inject_bug(c, "grad-avg-dp@rank"), ir::InvalidInput);
  EXPECT_THROW(inject_bug(c, "grad-avg-dp@rank=99"), ir::InvalidInput);
  EXPECT_THROW(parse_bug("x@color=3"), ir::InvalidInput);
}

// ---------------------------------------------------------------------------
// Anchors and options

void expect_small_and_fast(const GenOptions& o, int64_t ranks) {
  auto t0 = std::chrono::steady_clock::now();
  ir::Case c = generate(o);
  std::string text = frontend::write_case_string(c, frontend::Format::text);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(c.plan.mesh.num_ranks(), ranks);
  EXPECT_LT(s, 5.0);
  EXPECT_LT(text.size(), 4u << 20) << "bytes";
  // Ranks are never spelled out: programs are selected by pp stage only and
  // collectives name mesh axes.
  EXPECT_EQ(text.find("groups"), std::string::npos);
  EXPECT_LE(c.plan.programs.size(), static_cast<size_t>(o.pp));
}

TEST(Anchors, Llama405B_L3) {
  GenOptions o = opts("llama3-405b");
  o.dp = 64, o.tp = 8, o.pp = 16, o.mb = 16;
  expect_small_and_fast(o, 8192);
}

TEST(Anchors, DeepSeek671B_D3) {
  GenOptions o = opts("deepseek-v3-671b");
  o.dp = 32, o.tp = 8, o.pp = 8, o.mb = 16;
  expect_small_and_fast(o, 2048);
  o.dp = 4, o.ep = 8;  // the same 2048 GPUs with expert parallelism
  expect_small_and_fast(o, 2048);
}

TEST(Options, RejectsWhatCannotBeBuilt) {
  GenOptions o = opts("llama3-8b");
  o.ep = 2;  // dense model
  EXPECT_THROW(generate(o), ir::InvalidInput);
  o = opts("nope");
  EXPECT_THROW(generate(o), ir::InvalidInput);
  o = opts("llama3-8b");
  o.sp = true;  // without tp
  EXPECT_THROW(generate(o), ir::InvalidInput);
  o = opts("llama3-8b");
  o.pp = 4, o.layers = 2;
  EXPECT_THROW(generate(o), ir::InvalidInput);
}

TEST(Options, DimsDivideEveryShard) {
  GenOptions o = opts("llama3-8b");
  o.dp = 4, o.tp = 4, o.cp = 2, o.sp = true, o.mb = 3;
  auto d = plan_dims(*find_model("llama3-8b"), o);
  EXPECT_EQ(d["B"] % (4 * 3), 0);
  EXPECT_EQ(d["S"] % (2 * 4), 0);
  EXPECT_EQ(d["KV"] % 4, 0);
  EXPECT_EQ(d["NH"] % d["KV"], 0);
  EXPECT_EQ(d["V"] % 4, 0);
  EXPECT_TRUE(ir::validate_case(generate(o), "dims").empty());
}

// The point-to-point ops of a stage program in order: +tag for a send, -tag
// for a recv (tags >= 1000 carry gradients).
std::vector<int64_t> p2p_order(const ir::Program& p) {
  std::vector<int64_t> v;
  for (const auto& op : p.graph.ops)
    if (op.kind == "send" || op.kind == "recv") {
      int64_t t = std::get<ir::DimExpr>(*op.attr("tag")).eval({});
      v.push_back(op.kind == "send" ? t : -t);
    }
  return v;
}

TEST(Schedules, OneFOneBWarmsUpThenAlternates) {
  GenOptions o = opts("llama3-8b");
  o.pp = 2, o.mb = 3, o.schedule = "1f1b", o.step = Step::grads;
  ir::Case c = generate(o);
  // Stage 0: one warm-up forward, then forward mb1 / backward mb0, forward
  // mb2 / backward mb1, then the last backward. Tags: chunk*M + mb.
  EXPECT_EQ(p2p_order(c.plan.programs[0]), (std::vector<int64_t>{3, 4, -1003, 5, -1004, -1005}));
  // The last stage runs forward and backward of each microbatch in turn.
  EXPECT_EQ(p2p_order(c.plan.programs[1]), (std::vector<int64_t>{-3, 1003, -4, 1004, -5, 1005}));
  EXPECT_TRUE(ir::validate_case(c, "1f1b").empty());
}

TEST(Schedules, InterleavedCyclesModelChunks) {
  GenOptions o = opts("llama3-8b");
  o.pp = 2, o.vpp = 2, o.mb = 4, o.schedule = "interleaved", o.step = Step::grads;
  ir::Case c = generate(o);
  // Stage 0 holds chunks 0 and 2; warm-up (pp-1)*2 + (vpp-1)*pp = 4
  // forwards: chunk 0 of mb 0, 1 (to chunk 1), then chunk 2 of mb 0, 1 (from
  // chunk 1, to chunk 3).
  auto v = p2p_order(c.plan.programs[0]);
  ASSERT_GE(v.size(), 6u);
  EXPECT_EQ((std::vector<int64_t>(v.begin(), v.begin() + 6)),
            (std::vector<int64_t>{4, 5, -8, 12, -9, 13}));
  EXPECT_TRUE(ir::validate_case(c, "interleaved").empty());
  // Chunk 2 reads the output of chunk 1 from the last stage: the wrap-around.
  bool wrap = false;
  for (const auto& op : c.plan.programs[0].graph.ops)
    if (op.kind == "recv" && std::get<ir::DimExpr>(*op.attr("tag")).eval({}) == 8) wrap = true;
  EXPECT_TRUE(wrap);
}

int64_t count_ops(const ir::Graph& g, const std::string& kind, const std::string& prefix = "") {
  int64_t n = 0;
  for (const auto& op : g.ops) {
    if (op.kind == kind && (prefix.empty() || (!op.results.empty() && op.results[0].rfind(prefix, 0) == 0))) ++n;
    for (const auto& r : op.regions) n += count_ops(r, kind, prefix);
  }
  return n;
}

TEST(Zero, StagesShardWhatTheyPromise) {
  GenOptions o = opts("llama3-8b");
  o.dp = 2, o.mb = 2;
  o.zero = 1;  // whole gradients all-reduced, the update on a shard
  ir::Graph g1 = generate(o).plan.programs[0].graph;
  EXPECT_EQ(count_ops(g1, "reduce_scatter"), 0);
  EXPECT_GT(count_ops(g1, "slice", "shard.g."), 0);
  o.zero = 2;  // gradient shards reduce-scattered per microbatch, in the loop
  ir::Graph g2 = generate(o).plan.programs[0].graph;
  int64_t in_loop = 0;
  for (const auto& op : g2.ops)
    for (const auto& r : op.regions) in_loop += count_ops(r, "reduce_scatter", "grad.shard.");
  EXPECT_GT(in_loop, 0);
  EXPECT_EQ(count_ops(g2, "slice", "shard.g."), 0);
  o.zero = 3;  // parameters gathered for the forward and again for the backward
  ir::Graph g3 = generate(o).plan.programs[0].graph;
  EXPECT_GT(count_ops(g3, "allgather", "gathered."), 0);
  // Every gathered parameter the backward reads (all but the embedding table,
  // whose gradient needs only the token ids) is gathered again.
  EXPECT_EQ(count_ops(g3, "allgather", "regathered."), count_ops(g3, "allgather", "gathered.") - 1);
}

TEST(ContextParallel, BalancedChunksPairIAndMirror) {
  GenOptions o = opts("llama3-8b");
  o.cp = 2, o.cp_balanced = true;
  ir::Case c = generate(o);
  EXPECT_EQ(c.plan.dims.at("S") % 4, 0);
  std::set<std::string> offsets;
  for (const auto& pl : c.plan.placements)
    if (pl.spec_value == "tokens") offsets.insert(pl.region.at(1).offset.str());
  EXPECT_EQ(offsets.size(), 2u);  // chunk $cp and chunk 2cp-1-$cp
  std::set<std::string> q;
  for (const auto& op : c.plan.programs[0].graph.ops)
    if (op.kind == "softmax" && op.attr("q_offset")) q.insert(std::get<ir::DimExpr>(*op.attr("q_offset")).str());
  EXPECT_EQ(q.size(), 2u);
}

TEST(Options, RejectsBadSchedules) {
  GenOptions o = opts("llama3-8b");
  o.pp = 2, o.mb = 2, o.schedule = "zigzag";
  EXPECT_THROW(generate(o), ir::InvalidInput);
  o.schedule = "interleaved";  // vpp 1
  EXPECT_THROW(generate(o), ir::InvalidInput);
  o.vpp = 2, o.mb = 3;  // mb not a multiple of pp
  EXPECT_THROW(generate(o), ir::InvalidInput);
  o = opts("llama3-8b");
  o.vpp = 2;  // without interleaved
  EXPECT_THROW(generate(o), ir::InvalidInput);
  o = opts("llama3-8b");
  o.cp_balanced = true;  // without cp
  EXPECT_THROW(generate(o), ir::InvalidInput);
}

TEST(Models, ListedConfigsBuildSpecs) {
  for (const auto& m : models()) {
    ir::Spec s = build_spec(m, SpecOptions{});
    ir::DiagList d;
    ir::validate_spec(s, m.name, d);
    EXPECT_TRUE(d.empty()) << m.name << ": " << diags_str(d);
    EXPECT_GT(m.real.hidden, 0) << m.name;
  }
}

}  // namespace
}  // namespace parity::corpus
