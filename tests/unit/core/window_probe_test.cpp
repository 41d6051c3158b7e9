// shoal scale's counting and cost model (core/window_probe.hpp,
// core/scaling_model.hpp): a ring of entities run on one rank under a probe.
#include "shoal/core/window_probe.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/probed_model.hpp"
#include "shoal/core/simulator.hpp"

namespace shoal::core {
namespace {

constexpr double kUs = 1e-6;

TEST(MpiCosts, AllreduceInterpolatesInLog2OfRanks) {
  MpiCosts costs;
  costs.allreduce = {{4, 2 * kUs}, {16, 4 * kUs}};
  EXPECT_EQ(costs.allreduce_at(1), 0.0);
  EXPECT_NEAR(costs.allreduce_at(2), 1 * kUs, 1e-12);  // from (1 rank, 0)
  EXPECT_NEAR(costs.allreduce_at(4), 2 * kUs, 1e-12);
  EXPECT_NEAR(costs.allreduce_at(8), 3 * kUs, 1e-12);
  EXPECT_NEAR(costs.allreduce_at(16), 4 * kUs, 1e-12);
  EXPECT_NEAR(costs.allreduce_at(64), 6 * kUs, 1e-12);  // the last segment's slope
  MpiCosts one;
  one.allreduce = {{2, 1 * kUs}};
  EXPECT_NEAR(one.allreduce_at(8), 3 * kUs, 1e-12);
}

constexpr Time kHop = 1000;
constexpr std::uint32_t kCellTag = 1, kCreditTag = 2;

CrossingRole role_of(std::uint32_t tag) {
  return tag == kCellTag     ? CrossingRole::kCarryCredit
         : tag == kCreditTag ? CrossingRole::kCredit
                             : CrossingRole::kPlain;
}

/// Four entities, one per atom, in a ring: each event goes on to the next
/// entity one hop later until its payload runs out, as a "cell"; each entity
/// also sends itself a plain event and the previous one a "credit".
struct Ring {
  void handle(const Event& ev, Simulator& sim) {
    ++handled;
    if (ev.tag != kCellTag || ev.payload == 0) return;
    const EntityId self = sim.current();
    sim.send((self + 1) % 4, kHop, kCellTag, ev.payload - 1);
    sim.send(self, kHop, 0, 0);
    // As Network::return_credit: the probe hears when the credit arrives.
    if (note_credits) sim.will_arrive((self + 3) % 4, sim.now() + kHop);
    sim.send((self + 3) % 4, kHop, kCreditTag, 0);
  }
  std::int64_t handled = 0;
  bool note_credits = false;
};

Layout ring_layout() {
  Layout layout("ring", {1, 1, 1, 1}, {"a", "b", "c", "d"});
  for (AtomId a = 0; a < 4; ++a) {
    layout.add_link(a, (a + 1) % 4, kHop);
    layout.add_link(a, (a + 3) % 4, kHop);
  }
  return layout;
}

TEST(WindowProbe, CountsWhatEachCutWouldSendAndHandle) {
  const Comm self = Comm::self();
  const Layout layout = ring_layout();
  const std::vector<Partition> cuts = {
      Partition::from_strategy(layout, 2, Strategy::kRoundRobin),  // a c | b d
      Partition::from_strategy(layout, 4, Strategy::kRoundRobin),
      Partition::from_strategy(layout, 2, Strategy::kBlock),  // a b | c d
  };
  ScaleCosts costs;
  costs.mpi.latency = 1 * kUs;
  costs.mpi.bandwidth = 1e9;
  costs.mpi.allreduce = {{2, 1 * kUs}};
  WindowProbe probe(layout, cuts, &role_of, costs);
  EXPECT_EQ(probe.lookahead(), kHop);
  Simulator sim(self, layout, Partition::from_strategy(layout, 1, Strategy::kBlock), {});
  sim.attach_probe(probe);
  constexpr std::uint64_t kHops = 10;
  sim.schedule_initial(0, 0, 0, kCellTag, kHops);
  Ring ring;
  ProbedModel<Ring> probed(ring, probe);
  const RunSummary summary = sim.run(probed);
  ASSERT_EQ(summary.events, ring.handled);
  // 11 cell events (hops 10..0) at times 0..10; each of the first 10 sends a
  // plain event and a credit, handled one hop later.
  EXPECT_EQ(summary.events, 11 + 2 * 10);

  const std::vector<ScalePrediction> p = probe.predictions(1.0);
  ASSERT_EQ(p.size(), 3u);
  for (const ScalePrediction& cut : p) {
    EXPECT_EQ(cut.windows, 11);  // one per hop: the events of a time, a hop apart
    EXPECT_EQ(cut.events, summary.events);
    EXPECT_EQ(std::accumulate(cut.part_events.begin(), cut.part_events.end(), std::int64_t{0}),
              summary.events);
    EXPECT_EQ(std::accumulate(cut.part_sent.begin(), cut.part_sent.end(), std::int64_t{0}),
              cut.remote_events);
    EXPECT_EQ(std::accumulate(cut.part_received.begin(), cut.part_received.end(), std::int64_t{0}),
              cut.remote_events);
    EXPECT_NEAR(cut.mean_work_seconds, 1.0 / cut.parts, 1e-12);
    EXPECT_GT(cut.reduce_seconds, 0);
    // Without windows a part waits at most as long as window by window, and
    // the busiest does at least its share.
    EXPECT_LE(cut.causal_work_seconds, cut.work_seconds * (1 + 1e-12));
    EXPECT_GE(cut.causal_work_seconds, cut.mean_work_seconds * (1 - 1e-12));
    // Waiting only for what reaches a part, no longer than for what could,
    // nor than in the fewest windows.
    EXPECT_LE(cut.critical_path_seconds, cut.causal_work_seconds * (1 + 1e-12));
    EXPECT_LE(cut.critical_path_seconds, cut.fewest_work_seconds * (1 + 1e-12));
    EXPECT_GT(cut.critical_path_seconds, 0);
  }
  // Round-robin cuts every hop: 10 cells cross, and with each a credit comes
  // back (counted at the cell, not again as the credit event).
  EXPECT_EQ(p[0].remote_events, 20);
  EXPECT_EQ(p[1].remote_events, 20);
  // Blocks a b | c d: the hops b->c and d->a cross, 5 of the 10 (a->b, b->c,
  // ... from a).
  EXPECT_EQ(p[2].remote_events, 10);
  // A batch per window and pair of parts. Round-robin: in each window the
  // part handling the cell sends it on and returns the credit of the one it
  // got, both to the other part: one batch in each of the 11 windows.
  EXPECT_EQ(p[0].batches, 11);
  // Blocks: the 5 crossing cells and, a window later, their 5 credits.
  EXPECT_EQ(p[2].batches, 10);
  for (const ScalePrediction& cut : p) {
    EXPECT_GT(cut.balance(), 1.0 / cut.parts);
    EXPECT_LE(cut.balance(), 1.0);
  }
}

/// The ring of CountsWhatEachCutWouldSendAndHandle under the two-block cut
/// (a b | c d), its credits noted or not: the fewest windows it could run in.
std::int64_t fewest_windows_of_blocks(bool note_credits) {
  const Comm self = Comm::self();
  const Layout layout = ring_layout();
  const std::vector<Partition> cuts = {Partition::from_strategy(layout, 2, Strategy::kBlock)};
  WindowProbe probe(layout, cuts, &role_of, ScaleCosts{});
  Simulator sim(self, layout, Partition::from_strategy(layout, 1, Strategy::kBlock), {});
  sim.attach_probe(probe);
  sim.schedule_initial(0, 0, 0, kCellTag, 10);
  Ring ring;
  ring.note_credits = note_credits;
  ProbedModel<Ring> probed(ring, probe);
  sim.run(probed);
  const std::vector<ScalePrediction> p = probe.predictions(1.0);
  EXPECT_EQ(p.front().windows, 11);  // a hop each, as the lookahead gives
  return p.front().fewest_windows;
}

TEST(WindowProbe, CountsTheFewestWindowsAPerfectLookaheadCouldGive) {
  // The cell goes a b c d a ... c, a hop apart from time 0 to 10 hops. Only
  // b -> c (sent at hops 1, 5, 9) and d -> a (3, 7) cross, each arriving a
  // hop later; a window that opens at the first event at or after the last
  // one's end runs until such an arrival: [0,2) [2,4) [4,6) [6,8) [8,10) [10,).
  EXPECT_EQ(fewest_windows_of_blocks(false), 6);
  // The credits go back a hop later too, c -> b and a -> d across the cut, at
  // the other hops: every window ends a hop after it opens, as with the lookahead.
  EXPECT_EQ(fewest_windows_of_blocks(true), 11);
}

TEST(WindowProbe, LeavesTheFewestWindowsUncountedInAtomOrder) {
  const Comm self = Comm::self();
  const Layout layout = ring_layout();
  const std::vector<Partition> cuts = {Partition::from_strategy(layout, 2, Strategy::kBlock)};
  WindowProbe probe(layout, cuts, &role_of, ScaleCosts{});
  EngineOptions options;
  options.order = EventOrder::kAtom;
  Simulator sim(self, layout, Partition::from_strategy(layout, 1, Strategy::kBlock), options);
  sim.attach_probe(probe);
  sim.schedule_initial(0, 0, 0, kCellTag, 10);
  Ring ring;
  ProbedModel<Ring> probed(ring, probe);
  sim.run(probed);
  EXPECT_EQ(probe.predictions(1.0).front().fewest_windows, -1);
  EXPECT_EQ(probe.predictions(1.0).front().causal_work_seconds, -1.0);
  EXPECT_EQ(probe.predictions(1.0).front().critical_path_seconds, -1.0);
  EXPECT_EQ(probe.predictions(1.0).front().fewest_work_seconds, -1.0);
}

}  // namespace
}  // namespace shoal::core
