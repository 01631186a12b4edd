// The stage cache (`verify --cache DIR`) as a CI gate uses it: an unchanged
// plan re-proves nothing, a plan edited in one layer re-proves only that
// layer's stages, and a cache never hides a bug.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "corpus/bugs.h"
#include "corpus/generator.h"
#include "verify/check.h"

using namespace parity;

namespace {

corpus::GenOptions llama(int layers) {
  corpus::GenOptions o;
  o.model = "llama3-8b";
  o.tp = 2;
  o.layers = layers;
  return o;
}

// Rewrites `name = add(a, b)` as `add(b, a)` wherever it is defined in the
// plan: the same numbers, another stage key.
int swap_add_operands(ir::Case& c, const std::string& name) {
  int n = 0;
  std::function<void(ir::Graph&)> walk = [&](ir::Graph& g) {
    for (auto& op : g.ops) {
      if (op.kind == "add" && op.results.size() == 1 && op.results[0] == name && op.operands.size() == 2) {
        std::swap(op.operands[0], op.operands[1]);
        ++n;
      }
      for (auto& r : op.regions) walk(r);
    }
  };
  for (auto& p : c.plan.programs) walk(p.graph);
  return n;
}

// Distinct stages proved in this run (not taken from the cache).
std::vector<std::string> proved_now(const verify::Verdict& v) {
  std::vector<std::string> out;
  for (const auto& s : v.stage_list)
    if (!s.cached) out.push_back(s.spec_value);
  return out;
}

struct CacheDir {
  // One folder per test and process: ctest runs these tests side by side.
  std::string path = testing::TempDir() + "/parity-cache-test-" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
                     std::to_string(::getpid());
  CacheDir() { std::filesystem::remove_all(path); }
  ~CacheDir() { std::filesystem::remove_all(path); }
};

TEST(Cache, SecondRunProvesNothingAndAOneLayerChangeOnlyThatLayer) {
  CacheDir dir;
  verify::VerifyOptions opt;
  opt.cache_dir = dir.path;
  const int layers = 4;

  auto first = verify::verify_case(corpus::generate(llama(layers)), "t", opt);
  ASSERT_EQ(first.kind, verify::VerdictKind::verified) << first.stage_note;
  EXPECT_EQ(first.cached_stages, 0u);
  EXPECT_EQ(proved_now(first).size(), first.unique_stages);

  auto again = verify::verify_case(corpus::generate(llama(layers)), "t", opt);
  ASSERT_EQ(again.kind, verify::VerdictKind::verified);
  EXPECT_TRUE(proved_now(again).empty()) << "an unchanged plan re-proves no stage";
  EXPECT_EQ(again.cached_stages, again.unique_stages);

  // Layer 2 rewritten (same numbers): its residual add now has its operands swapped.
  ir::Case edited = corpus::generate(llama(layers));
  ASSERT_EQ(swap_add_operands(edited, "l2.attn.res"), 1);
  auto after = verify::verify_case(edited, "t", opt);
  ASSERT_EQ(after.kind, verify::VerdictKind::verified) << after.stage_note;
  std::vector<std::string> redo = proved_now(after);
  ASSERT_FALSE(redo.empty()) << "the edited layer's stages have new keys";
  EXPECT_LT(redo.size(), after.unique_stages / 4) << "only the edited layer is re-proved";
  for (const auto& s : redo) EXPECT_NE(s.find("l2."), std::string::npos) << s << " is not in layer 2";

  // The same edit again: all from the cache now.
  auto edited_again = verify::verify_case(edited, "t", opt);
  EXPECT_TRUE(proved_now(edited_again).empty());

  // A bug in a layer whose correct stages are all cached is still found.
  ir::Case bad = corpus::generate(llama(layers));
  corpus::inject_bug(bad, "missing-allreduce@layer=2");
  EXPECT_EQ(verify::verify_case(bad, "t", opt).kind, verify::VerdictKind::mismatch);
}

// Entries are keyed by the whole canonical key: a file whose content is
// another key (a hash collision, or a file edited by hand) is not a hit.
TEST(Cache, AnEntryCountsOnlyWhenTheWholeKeyMatches) {
  CacheDir dir;
  verify::VerifyOptions opt;
  opt.cache_dir = dir.path;
  auto first = verify::verify_case(corpus::generate(llama(2)), "t", opt);
  ASSERT_EQ(first.kind, verify::VerdictKind::verified);
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path)) {
    if (!e.is_regular_file()) continue;
    std::filesystem::resize_file(e.path(), std::filesystem::file_size(e.path()) / 2);
    ++files;
  }
  EXPECT_EQ(files, first.unique_stages);
  auto again = verify::verify_case(corpus::generate(llama(2)), "t", opt);
  ASSERT_EQ(again.kind, verify::VerdictKind::verified);
  EXPECT_EQ(again.cached_stages, 0u) << "truncated entries are not proofs";
}

}  // namespace
