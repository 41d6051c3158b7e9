// The engine at N ranks processes, at every entity, exactly the events of the
// one-rank run, in the same order: per-entity histories are compared with a
// serial run of the same model made on each rank over MPI_COMM_SELF.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/random.hpp"
#include "shoal/core/simulator.hpp"

namespace shoal::core {
namespace {

constexpr Time kLatency = 1000;  // ps, between any two atoms

/// Atoms of uneven sizes, every pair linked with latency kLatency.
Layout make_layout() {
  const std::vector<EntityId> sizes{5, 9, 3, 7, 11, 4, 6, 8, 2, 10, 5, 7};
  std::vector<std::string> names;
  for (std::size_t a = 0; a < sizes.size(); ++a) names.push_back("atom " + std::to_string(a));
  Layout layout("mpi-test", sizes, names);
  for (AtomId a = 0; a < sizes.size(); ++a) {
    for (AtomId b = 0; b < sizes.size(); ++b) {
      if (a != b) layout.add_link(a, b, kLatency);
    }
  }
  return layout;
}

/// Sends to other atoms exactly on the window edge (delay = latency) or later,
/// inside its atom with any delay >= 0, and chains zero-delay self events, so
/// ties, window edges and same-time bursts all occur.
struct Gossip {
  const Layout& layout;
  std::vector<std::uint64_t> history;
  std::vector<std::uint64_t> count;

  explicit Gossip(const Layout& l)
      : layout(l), history(l.entity_count(), 0), count(l.entity_count(), 0) {}

  void initialize(Simulator& sim) {
    for (EntityId e = 0; e < layout.entity_count(); ++e) {
      if (!sim.owns(e)) continue;
      for (int k = 0; k < 2; ++k) sim.schedule_initial(e, e, sim.rng(e).below(3) * kLatency, 0, 0);
    }
  }

  void handle(const Event& ev, Simulator& sim) {
    std::uint64_t& h = history[ev.target];
    h = mix64(h ^ static_cast<std::uint64_t>(ev.time));
    h = mix64(h ^ ev.tiebreak);
    h = mix64(h ^ ev.payload);
    ++count[ev.target];
    Rng& rng = sim.rng();
    const AtomId atom = layout.atom_of(ev.target);
    auto other_atom_entity = [&] {
      AtomId to = static_cast<AtomId>(rng.below(layout.atom_count() - 1));
      if (to >= atom) ++to;
      return layout.atom_begin(to) +
             static_cast<EntityId>(rng.below(layout.atom_end(to) - layout.atom_begin(to)));
    };
    if (ev.payload < 2 && rng.below(4) == 0) {
      sim.send(ev.target, 0, 1, ev.payload + 1);  // same time, same entity
      return;
    }
    switch (rng.below(4)) {
      case 0:
        sim.send(other_atom_entity(), kLatency, 0, 0);  // exactly the window edge
        break;
      case 1:
        sim.send(other_atom_entity(), kLatency + rng.below(3) * 500, 0, 0);
        break;
      default: {
        const EntityId begin = layout.atom_begin(atom);
        const EntityId local =
            begin + static_cast<EntityId>(rng.below(layout.atom_end(atom) - begin));
        sim.send(local, rng.below(3) * 700, 0, 0);  // may be 0: same time, another entity
      }
    }
  }
};

struct Outcome {
  std::vector<std::uint64_t> history;  // on rank 0 only
  std::vector<std::uint64_t> count;
  RunSummary summary;
};

Outcome run_model(const Comm& comm, const Layout& layout, const Partition& partition, Time end) {
  EngineOptions options;
  options.seed = 42;
  options.end_time = end;
  options.progress = false;
  Simulator sim(comm, layout, partition, options);
  Gossip model(layout);
  model.initialize(sim);
  Outcome out;
  out.summary = sim.run(model);
  out.history.resize(layout.entity_count());
  out.count.resize(layout.entity_count());
  comm.sum_to_root(model.history, out.history);
  comm.sum_to_root(model.count, out.count);
  return out;
}

void expect_same_as_serial(Strategy strategy, Time end) {
  const Comm world = Comm::world();
  const Comm self = Comm::self();
  const Layout layout = make_layout();
  const Outcome parallel =
      run_model(world, layout, Partition::from_strategy(layout, world.size(), strategy), end);
  const Outcome serial =
      run_model(self, layout, Partition::from_strategy(layout, 1, Strategy::kBlock), end);
  EXPECT_EQ(parallel.summary.events, serial.summary.events);
  EXPECT_EQ(parallel.summary.simulated_time, serial.summary.simulated_time);
  if (world.size() > 1) {
    EXPECT_EQ(parallel.summary.lookahead, kLatency);
    EXPECT_GT(parallel.summary.remote_events, 0);
  }
  if (world.rank() != 0) return;
  EXPECT_GT(serial.summary.events, 1000);
  for (EntityId e = 0; e < layout.entity_count(); ++e) {
    EXPECT_EQ(parallel.count[e], serial.count[e]) << "entity " << e;
    EXPECT_EQ(parallel.history[e], serial.history[e]) << "entity " << e;
  }
}

TEST(EngineMpi, BlockPartitionMatchesSerialRun) {
  expect_same_as_serial(Strategy::kBlock, 200 * kLatency + 333);
}

TEST(EngineMpi, RoundRobinPartitionMatchesSerialRun) {
  expect_same_as_serial(Strategy::kRoundRobin, 200 * kLatency + 333);
}

TEST(EngineMpi, EndTimeOnAWindowEdge) { expect_same_as_serial(Strategy::kBlock, 150 * kLatency); }

TEST(EngineMpi, ZeroLatencyCutLinkIsRejectedOnEveryRank) {
  const Comm world = Comm::world();
  // Eight atoms, so that up to eight ranks each get one; the link joins the
  // first and the last, on different ranks whenever there are several.
  Layout layout("zero", {2, 2, 2, 2, 2, 2, 2, 2}, {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"});
  layout.add_link(0, 7, 0);
  const Partition partition = Partition::from_strategy(layout, world.size(), Strategy::kBlock);
  if (world.size() == 1) {
    EXPECT_EQ(lookahead(layout, partition), kTimeInfinity);
  } else {
    EXPECT_THROW(lookahead(layout, partition), shoal::Error);
  }
}

TEST(EngineMpi, OnlyARanksOwnEntitiesHaveStreams) {
  // Every other entity's engine state is left unconstructed (and its pages
  // untouched): asking for its stream is an error, not a zeroed generator.
  const Comm world = Comm::world();
  const Layout layout = make_layout();
  const Partition partition = Partition::from_strategy(layout, world.size(), Strategy::kBlock);
  EngineOptions options;
  options.seed = 77;
  options.progress = false;
  Simulator sim(world, layout, partition, options);
  EntityId owned = 0;
  for (EntityId e = 0; e < layout.entity_count(); ++e) {
    if (sim.owns(e)) {
      ++owned;
      Rng fresh(77, e);
      EXPECT_EQ(sim.rng(e).next(), fresh.next()) << "entity " << e;
    } else {
      EXPECT_THROW(sim.rng(e), shoal::Error) << "entity " << e;
    }
  }
  EXPECT_GT(owned, 0u);
  EXPECT_EQ(world.sum(std::int64_t{owned}), std::int64_t{layout.entity_count()});
}

TEST(EngineMpi, ASumInPlaceAddsEveryRanksValues) {
  const Comm world = Comm::world();
  const auto r = static_cast<std::uint64_t>(world.rank());
  std::vector<std::uint64_t> values{1, r, r * r, std::uint64_t{1} << 40};
  world.sum_all_in_place(values);
  const auto n = static_cast<std::uint64_t>(world.size());
  const std::vector<std::uint64_t> expected{n, n * (n - 1) / 2, (n - 1) * n * (2 * n - 1) / 6,
                                            n << 40};
  EXPECT_EQ(values, expected);
}

// Long arrays are reduced a block of values at a time (core/comm.cpp): every
// value, across the blocks' seams, comes out as one reduction would give it.
TEST(EngineMpi, LongReductionsGiveEveryValue) {
  const Comm world = Comm::world();
  const auto r = static_cast<std::int64_t>(world.rank());
  const auto n = static_cast<std::int64_t>(world.size());
  constexpr std::size_t kValues = 100'003;  // several blocks and a short last one
  std::vector<std::uint64_t> mine(kValues), all(kValues), root(world.rank() == 0 ? kValues : 0);
  std::vector<std::int64_t> signed_mine(kValues), low(root.size()), high(root.size());
  for (std::size_t i = 0; i < kValues; ++i) {
    mine[i] = i + static_cast<std::uint64_t>(r);
    signed_mine[i] = static_cast<std::int64_t>(i) * (r + 1) - r;
  }
  world.sum_all(mine, all);
  world.sum_to_root(mine, root);
  world.min_to_root(signed_mine, low);
  world.max_to_root(signed_mine, high);
  std::vector<std::uint64_t> in_place = mine;
  world.sum_all_in_place(in_place);
  std::vector<std::uint64_t> bits(kValues, 0), ored(kValues, 0);
  for (std::size_t i = 0; i < kValues; ++i) bits[i] = std::uint64_t{1} << ((i + r) % 64);
  world.or_all(bits, ored);
  for (std::size_t i = 0; i < kValues; ++i) {
    const auto v = static_cast<std::int64_t>(i);
    const auto sum = static_cast<std::uint64_t>(n * v + n * (n - 1) / 2);
    ASSERT_EQ(all[i], sum) << "value " << i;
    ASSERT_EQ(in_place[i], sum) << "value " << i;
    std::uint64_t expected_bits = 0;
    for (std::int64_t k = 0; k < n; ++k) expected_bits |= std::uint64_t{1} << ((i + k) % 64);
    ASSERT_EQ(ored[i], expected_bits) << "value " << i;
    if (world.rank() != 0) continue;
    ASSERT_EQ(root[i], sum) << "value " << i;
    // i * (k + 1) - k over the ranks k: lowest at k = 0 for i >= 1, highest at k = n - 1.
    ASSERT_EQ(low[i], i == 0 ? -(n - 1) : v) << "value " << i;
    ASSERT_EQ(high[i], i == 0 ? 0 : v * n - (n - 1)) << "value " << i;
  }
}

// A sum onto each rank in turn (the links' counts go onto rank b % ranks,
// exec/run_results.hpp): only that rank's output is written, with every value.
TEST(EngineMpi, ASumOntoAnyRankGivesItEveryValue) {
  const Comm world = Comm::world();
  const auto r = static_cast<std::uint64_t>(world.rank());
  const auto n = static_cast<std::uint64_t>(world.size());
  constexpr std::size_t kValues = 40'000;  // two blocks of the reduction
  std::vector<std::uint64_t> mine(kValues);
  for (std::size_t i = 0; i < kValues; ++i) mine[i] = i * (r + 1);
  for (int root = 0; root < world.size(); ++root) {
    std::vector<std::uint64_t> out(world.rank() == root ? kValues : 0, 7);
    world.sum_to(root, mine, out);
    if (world.rank() != root) continue;
    for (std::size_t i = 0; i < kValues; ++i) ASSERT_EQ(out[i], i * n * (n + 1) / 2) << i;
  }
}

}  // namespace
}  // namespace shoal::core
