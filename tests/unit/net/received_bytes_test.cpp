// ReceivedBytes: the bytes received of the flows in progress, against a plain
// count per flow, through growth and the backward-shift deletions of its
// table; and the conservation errors of a count past a flow's total or a cell
// after its end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/net/received_bytes.hpp"

namespace shoal::net {
namespace {

TEST(ReceivedBytes, MatchesAPlainCountThroughGrowthAndDeletions) {
  constexpr std::uint32_t kFlows = 50'000;
  std::mt19937_64 rng(7);
  std::vector<Bytes> total(kFlows), left(kFlows);
  for (std::uint32_t f = 0; f < kFlows; ++f) total[f] = left[f] = 1 + rng() % 9;
  std::vector<Bytes> plain(kFlows, 0);
  ReceivedBytes received(kFlows);
  std::uint32_t most_in_progress = 0;
  std::uint32_t ended = 0;
  Bytes all = 0;
  // Flows arrive in waves of a few thousand at once, a byte or a few at a time.
  for (std::uint32_t wave = 0; wave < kFlows; wave += 5'000) {
    std::vector<std::uint32_t> open;
    for (std::uint32_t f = wave; f < wave + 5'000; ++f) open.push_back(f);
    while (!open.empty()) {
      const std::size_t i = rng() % open.size();
      const std::uint32_t f = open[i];
      const Bytes bytes = std::min<Bytes>(left[f], 1 + static_cast<Bytes>(rng() % 3));
      left[f] -= bytes;
      plain[f] += bytes;
      all += bytes;
      EXPECT_EQ(received.add(f, bytes, total[f]), left[f] == 0) << "flow " << f;
      most_in_progress = std::max(most_in_progress, received.in_progress());
      if (left[f] == 0) {
        ++ended;
        open[i] = open.back();
        open.pop_back();
      }
      // A sample of flows, in progress or not, reads as the plain count.
      const std::uint32_t g = static_cast<std::uint32_t>(rng() % kFlows);
      ASSERT_EQ(received.of(g, total[g]), plain[g]) << "flow " << g;
    }
  }
  EXPECT_EQ(ended, kFlows);
  EXPECT_EQ(received.in_progress(), 0u);
  EXPECT_EQ(received.total(), all);
  for (std::uint32_t f = 0; f < kFlows; ++f) EXPECT_TRUE(received.has_ended(f));
  // The table grew past its first size and held thousands at once.
  EXPECT_GT(most_in_progress, 2'000u);
}

TEST(ReceivedBytes, AOneCellFlowEndsWithoutATableSlot) {
  ReceivedBytes received(10);
  EXPECT_TRUE(received.add(3, 100, 100));
  EXPECT_EQ(received.in_progress(), 0u);
  EXPECT_TRUE(received.has_ended(3));
  EXPECT_FALSE(received.has_ended(4));
  EXPECT_EQ(received.of(3, 100), 100);
  EXPECT_EQ(received.of(4, 50), 0);
}

TEST(ReceivedBytes, CountsPastATotalOrAfterTheEndAreConservationErrors) {
  ReceivedBytes received(10);
  EXPECT_FALSE(received.add(1, 60, 100));
  try {
    received.add(1, 50, 100);
    FAIL() << "an overcount was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "conservation: flow 1 received 110 of 100 bytes");
  }
  EXPECT_TRUE(received.add(2, 100, 100));
  // A cell of an ended flow, whether it would end it again or not.
  EXPECT_THROW(received.add(2, 100, 100), Error);
  try {
    received.add(2, 10, 100);
    FAIL() << "a cell after the flow's end was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "conservation: flow 2 received 110 of 100 bytes");
  }
}

TEST(ReceivedBytes, AFlowsEndedBitIsAtItsPlaceAmongTheHeldFlows) {
  // A rank holding flows 100, 200 and 300 of a large DAG keeps three bits.
  const std::vector<std::uint32_t> held{100, 200, 300};
  ReceivedBytes received(held.size(), [&](std::uint32_t flow) {
    return static_cast<std::size_t>(std::find(held.begin(), held.end(), flow) - held.begin());
  });
  EXPECT_FALSE(received.add(200, 40, 100));
  EXPECT_TRUE(received.add(200, 60, 100));
  EXPECT_TRUE(received.add(300, 10, 10));
  EXPECT_FALSE(received.has_ended(100));
  EXPECT_TRUE(received.has_ended(200));
  EXPECT_TRUE(received.has_ended(300));
  EXPECT_EQ(received.of(100, 5), 0);
  EXPECT_EQ(received.of(200, 100), 100);
  EXPECT_THROW(received.add(300, 1, 10), Error);
}

}  // namespace
}  // namespace shoal::net
