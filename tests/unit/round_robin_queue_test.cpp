#include "shoal/net/round_robin_queue.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "shoal/net/ring.hpp"

namespace shoal::net {
namespace {

TEST(Ring, KeepsOrderAcrossGrowthAndWrap) {
  Ring<int> ring;
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {  // uneven pushes and pops wrap the head around
    for (int i = 0; i < 7; ++i) ring.push(next_in++);
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(ring.front(), next_out++);
      ring.pop();
    }
  }
  EXPECT_EQ(ring.size(), static_cast<std::size_t>(next_in - next_out));
  while (!ring.empty()) {
    ASSERT_EQ(ring.front(), next_out++);
    ring.pop();
  }
  EXPECT_EQ(next_out, next_in);
}

std::vector<std::pair<std::uint32_t, int>> drain(RoundRobinQueue<int>& q) {
  std::vector<std::pair<std::uint32_t, int>> served;
  while (!q.empty()) {
    served.emplace_back(static_cast<std::uint32_t>(q.front() / 100), q.front() % 100);
    q.pop();
  }
  return served;
}

TEST(RoundRobinQueue, ServesOneItemPerFlowInTurnAndKeepsEachFlowsOrder) {
  RoundRobinQueue<int> q;
  // Flow 7 has three items, flow 3 two, flow 9 one (item = flow * 100 + sequence).
  for (int s = 0; s < 3; ++s) q.push(7, 700 + s);
  for (int s = 0; s < 2; ++s) q.push(3, 300 + s);
  q.push(9, 900);
  EXPECT_EQ(q.flows(), 3u);
  const std::vector<std::pair<std::uint32_t, int>> expected = {{7, 0}, {3, 0}, {9, 0},
                                                               {7, 1}, {3, 1}, {7, 2}};
  EXPECT_EQ(drain(q), expected);
}

TEST(RoundRobinQueue, AFlowThatEmptiesRejoinsAtTheBackAndSlotsAreReused) {
  RoundRobinQueue<int> q;
  q.push(1, 100);
  q.push(2, 200);
  q.pop();         // flow 1 served and now empty
  q.push(1, 101);  // it rejoins behind flow 2
  q.push(3, 300);
  const std::vector<std::pair<std::uint32_t, int>> expected = {{2, 0}, {1, 1}, {3, 0}};
  EXPECT_EQ(drain(q), expected);
  EXPECT_EQ(q.flows(), 0u);
  for (std::uint32_t f = 10; f < 14; ++f) q.push(f, static_cast<int>(f * 100));
  EXPECT_EQ(q.flows(), 4u);
  EXPECT_EQ(drain(q).size(), 4u);
}

}  // namespace
}  // namespace shoal::net
