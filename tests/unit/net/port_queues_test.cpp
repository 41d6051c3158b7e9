#include "shoal/net/port_queues.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
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

// Every field distinct, so a queue that mixes up two cells' fields shows it.
Cell cell(std::uint32_t flow, std::uint32_t sequence, std::uint32_t hop = 1) {
  return {flow, sequence, sequence % 7 == 0 ? topo::kNoLink : sequence * 3 + 1, hop,
          static_cast<Time>(flow) * 1000 + sequence};
}

/// (flow, sequence) in the order the port class serves them.
std::vector<std::pair<std::uint32_t, std::uint32_t>> drain(PortQueues& q, PortQueues::Turn& turn,
                                                           topo::LinkId link, int cls) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> served;
  while (!turn.empty()) {
    const Cell c = q.front(turn);
    served.emplace_back(c.flow, c.bytes);
    q.pop(turn, link, cls);
  }
  return served;
}

TEST(PortQueues, ServesOneCellPerFlowInTurnAndKeepsEachFlowsOrder) {
  PortQueues q = PortQueues::hashed();
  PortQueues::Turn turn;
  for (std::uint32_t s = 0; s < 3; ++s) q.push(turn, 5, 0, cell(7, s));
  for (std::uint32_t s = 0; s < 2; ++s) q.push(turn, 5, 0, cell(3, s));
  q.push(turn, 5, 0, cell(9, 0));
  EXPECT_EQ(q.lanes(turn), 3u);
  EXPECT_EQ(q.count(turn), 6u);
  EXPECT_EQ(q.front(turn).tail, 7000);
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> expected = {{7, 0}, {3, 0}, {9, 0},
                                                                         {7, 1}, {3, 1}, {7, 2}};
  EXPECT_EQ(drain(q, turn, 5, 0), expected);
  EXPECT_EQ(q.live_lanes(), 0u);
}

TEST(PortQueues, AFlowThatEmptiesRejoinsAtTheBack) {
  PortQueues q = PortQueues::hashed();
  PortQueues::Turn turn;
  q.push(turn, 1, 2, cell(1, 0));
  q.push(turn, 1, 2, cell(2, 0));
  q.pop(turn, 1, 2);               // flow 1 served and now empty
  q.push(turn, 1, 2, cell(1, 1));  // it rejoins behind flow 2
  q.push(turn, 1, 2, cell(3, 0));
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> expected = {{2, 0}, {1, 1}, {3, 0}};
  EXPECT_EQ(drain(q, turn, 1, 2), expected);
}

TEST(PortQueues, FifoModeKeepsArrivalOrderAcrossFlows) {
  PortQueues q = PortQueues::fifo();
  PortQueues::Turn turn;
  q.push(turn, 4, 0, cell(7, 0));
  q.push(turn, 4, 0, cell(7, 1));
  q.push(turn, 4, 0, cell(3, 0));
  q.push(turn, 4, 0, cell(7, 2));
  EXPECT_EQ(q.lanes(turn), 1u);
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> expected = {
      {7, 0}, {7, 1}, {3, 0}, {7, 2}};
  EXPECT_EQ(drain(q, turn, 4, 0), expected);
}

TEST(PortQueues, PortsAndClassesAreSeparate) {
  PortQueues q = PortQueues::hashed();
  PortQueues::Turn a, b, c;
  q.push(a, 10, 0, cell(1, 0));
  q.push(b, 11, 0, cell(1, 1));  // the same flow at another port
  q.push(c, 10, 3, cell(1, 2));  // and in another class of the first port
  EXPECT_EQ(q.live_lanes(), 3u);
  EXPECT_EQ(q.front(b).bytes, 1u);
  q.pop(b, 11, 0);
  EXPECT_EQ(q.front(a).bytes, 0u);
  EXPECT_EQ(q.front(c).bytes, 2u);
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(q.lanes_found_again(a, 10, 0));
  EXPECT_FALSE(q.lanes_found_again(a, 11, 0));  // its key names another port's lane
  EXPECT_FALSE(q.lanes_found_again(c, 10, 0));  // ... or another class's
}

// Many ports, flows and classes pushed and popped at random, against a plain
// model of round robin: every cell comes out where the model says. Hashed,
// the lanes' hash grows and deletes (backward shift) thousands of times; by
// hop, each port class is one hop of the flows' paths (a fixed route; hop 0 is
// the sender's, never queued), so (flow, hop) names the lane, and slots are
// emptied and reused as often.
void expect_round_robin(PortQueues q, bool hop_per_port_class) {
  constexpr int kPorts = 63;  // by hop: port classes are hops 1-126, a lane's 7 bits
  std::vector<PortQueues::Turn> turns(kPorts * 2);
  struct ModelPort {
    std::deque<std::uint32_t> turn;                              // flows in service order
    std::map<std::uint32_t, std::deque<std::uint32_t>> waiting;  // flow -> sequences
  };
  std::vector<ModelPort> model(kPorts * 2);
  std::mt19937_64 rng(7);
  std::uint32_t sequence = 0;
  std::size_t in_model = 0;
  for (int step = 0; step < 200000; ++step) {
    const auto port = static_cast<topo::LinkId>(rng() % kPorts);
    const int cls = static_cast<int>(rng() % 2);
    const std::size_t k = port * 2 + static_cast<std::size_t>(cls);
    ModelPort& m = model[k];
    // Grow to a few thousand cells, then drain towards empty, twice over.
    const bool pushing = (step / 50000) % 2 == 0 ? rng() % 3 != 0 : rng() % 3 == 0;
    if (pushing || m.turn.empty()) {
      const auto flow = static_cast<std::uint32_t>(rng() % 500);
      const auto hop = static_cast<std::uint32_t>(hop_per_port_class ? k + 1 : rng() % 8);
      q.push(turns[k], port, cls, cell(flow, sequence, hop));
      if (m.waiting[flow].empty()) m.turn.push_back(flow);
      m.waiting[flow].push_back(sequence++);
      ++in_model;
    } else {
      const std::uint32_t flow = m.turn.front();
      const Cell got = q.front(turns[k]);
      ASSERT_EQ(got.flow, flow);
      const Cell want = cell(flow, m.waiting[flow].front(), got.hop);
      ASSERT_EQ(got.bytes, want.bytes);
      ASSERT_EQ(got.in_link, want.in_link);
      ASSERT_EQ(got.tail, want.tail);
      if (hop_per_port_class) {
        ASSERT_EQ(got.hop, k + 1);
      }
      q.pop(turns[k], port, cls);
      m.waiting[flow].pop_front();
      m.turn.pop_front();
      if (!m.waiting[flow].empty()) m.turn.push_back(flow);
      --in_model;
    }
    ASSERT_EQ(turns[k].empty(), m.turn.empty());
    if (step % 1000 == 0) {
      ASSERT_TRUE(q.lanes_found_again(turns[k], port, cls));
    }
  }
  std::size_t counted = 0, lanes = 0;
  for (std::size_t k = 0; k < turns.size(); ++k) {
    counted += q.count(turns[k]);
    lanes += q.lanes(turns[k]);
    EXPECT_EQ(q.lanes(turns[k]), model[k].turn.size());
    EXPECT_TRUE(
        q.lanes_found_again(turns[k], static_cast<topo::LinkId>(k / 2), static_cast<int>(k % 2)));
  }
  EXPECT_EQ(counted, in_model);
  EXPECT_EQ(lanes, q.live_lanes());
}

TEST(PortQueues, MatchesAModelUnderRandomPushesAndPops) {
  expect_round_robin(PortQueues::hashed(), false);
}

TEST(PortQueues, ByHopMatchesTheModelWhereEachHopIsOnePortClass) {
  expect_round_robin(PortQueues::by_hop(500, 127), true);
}

TEST(PortQueues, ByHopKeepsEachHopOfAFlowApartAndRefusesHopsOutsideThePath) {
  PortQueues q = PortQueues::by_hop(10, 4);
  PortQueues::Turn at_leaf, at_spine;
  q.push(at_leaf, 3, 0, cell(5, 0, 1));
  q.push(at_spine, 8, 0, cell(5, 1, 2));  // the same flow one hop on
  q.push(at_leaf, 3, 0, cell(5, 2, 1));
  EXPECT_EQ(q.count(at_leaf), 2u);
  EXPECT_EQ(q.lanes(at_leaf), 1u);
  EXPECT_EQ(q.count(at_spine), 1u);
  EXPECT_EQ(q.live_lanes(), 2u);
  q.pop(at_spine, 8, 0);
  q.push(at_spine, 8, 0, cell(5, 3, 2));  // its slot was emptied: a new lane
  EXPECT_EQ(q.front(at_spine).bytes, 3u);
  EXPECT_EQ(q.front(at_leaf).bytes, 0u);
  EXPECT_THROW(q.push(at_leaf, 3, 0, cell(5, 4, 4)), Error);
  EXPECT_THROW(q.push(at_leaf, 3, 0, cell(5, 4, 0)), Error);  // the sender's hop has no slot
  EXPECT_EQ(PortQueues::by_hop_bytes(10, 4), 10u * 3 * 4);
  EXPECT_TRUE(q.lanes_found_again(at_leaf, 3, 0));
  EXPECT_TRUE(q.lanes_found_again(at_spine, 8, 0));
}

TEST(PortQueues, FifoModeMatchesAQueueUnderRandomPushesAndPops) {
  constexpr int kPorts = 16;
  PortQueues q = PortQueues::fifo();
  std::vector<PortQueues::Turn> turns(kPorts);
  std::vector<std::deque<Cell>> model(kPorts);
  std::mt19937_64 rng(11);
  std::uint32_t sequence = 0;
  for (int step = 0; step < 50000; ++step) {
    const auto port = static_cast<topo::LinkId>(rng() % kPorts);
    std::deque<Cell>& m = model[port];
    if (rng() % 2 == 0 || m.empty()) {
      const Cell c = cell(static_cast<std::uint32_t>(rng() % 50), sequence++);
      q.push(turns[port], port, 0, c);
      m.push_back(c);
    } else {
      const Cell got = q.front(turns[port]);
      ASSERT_EQ(got.flow, m.front().flow);
      ASSERT_EQ(got.bytes, m.front().bytes);
      ASSERT_EQ(got.in_link, m.front().in_link);
      ASSERT_EQ(got.hop, m.front().hop);
      ASSERT_EQ(got.tail, m.front().tail);
      q.pop(turns[port], port, 0);
      m.pop_front();
    }
    ASSERT_EQ(turns[port].empty(), m.empty());
    ASSERT_EQ(q.count(turns[port]), m.size());
  }
}

}  // namespace
}  // namespace shoal::net
