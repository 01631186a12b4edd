// ir::parallel_for: every index runs once on any thread count; an exception
// stops the loop and the lowest-index one comes out, as it would sequentially.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/parallel.h"

using parity::ir::parallel_for;

TEST(ParallelFor, EveryIndexOnceOnAnyThreadCount) {
  for (size_t threads : {1u, 2u, 7u}) {
    std::vector<std::atomic<int>> hits(1000);
    parallel_for(hits.size(), threads, [&](size_t i) { ++hits[i]; });
    for (const auto& h : hits) EXPECT_EQ(h.load(), 1) << threads << " threads";
  }
  parallel_for(0, 4, [](size_t) { FAIL() << "no index to run"; });
}

TEST(ParallelFor, LowestThrowingIndexIsRethrown) {
  for (size_t threads : {1u, 4u}) {
    try {
      parallel_for(100, threads, [](size_t i) {
        if (i == 3 || i == 5) throw std::runtime_error(std::to_string(i));
      });
      FAIL() << "nothing thrown";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "3") << threads << " threads";
    }
  }
}
