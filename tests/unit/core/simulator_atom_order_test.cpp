// Atom order (EventOrder::kAtom) on one rank: each atom's events as time order gives
// them, floor()'s promise, and the sub-window an event to another atom must keep.
#include "shoal/core/simulator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/random.hpp"
#include "simulator_test_support.hpp"

namespace shoal::core {
namespace {

using namespace simulator_test;
using shoal::test::error_of;

/// Atoms of `per_atom` entities in a ring, each linked to the next with
/// `latency` (the atoms' lookahead).
Layout ring_of_atoms(std::size_t atoms, EntityId per_atom, Time latency) {
  Layout layout("atom-ring", std::vector<EntityId>(atoms, per_atom), names(atoms));
  for (std::size_t a = 0; a < atoms; ++a) {
    layout.add_link(static_cast<AtomId>(a), static_cast<AtomId>((a + 1) % atoms), latency);
  }
  return layout;
}

/// Sends inside its atom after any delay (often 0), and to other atoms no
/// sooner than the lookahead; checks floor()'s promise: an entity never
/// handles an event before a time floor() gave for it.
struct AtomModel {
  EntityId per_atom = 0;
  EntityId entities = 0;
  Time lookahead = 0;
  std::vector<Handled> log;
  std::vector<Time> promised;  // by entity: the latest floor() given for it
  std::int64_t broken = 0;

  void handle(const Event& e, Simulator& sim) {
    log.push_back(seen(e));
    if (e.time < promised[e.target]) ++broken;
    for (int probe = 0; probe < 2; ++probe) {
      const auto other = static_cast<EntityId>(sim.rng().below(entities));
      promised[other] = std::max(promised[other], sim.floor(other));
    }
    const std::uint64_t r = sim.rng().below(10);
    const int sends = r == 0 ? 0 : (r == 1 ? 2 : 1);
    for (int k = 0; k < sends; ++k) {
      if (sim.rng().below(3) == 0) {
        const auto target = static_cast<EntityId>(sim.rng().below(entities));
        sim.send(target, lookahead + sim.rng().exponential(lookahead), 1, e.payload + 1);
      } else {
        const EntityId first = e.target / per_atom * per_atom;
        const auto target = first + static_cast<EntityId>(sim.rng().below(per_atom));
        sim.send(target, sim.rng().exponential(lookahead / 4), 2, e.payload + 1);
      }
    }
  }
};

/// Each entity's events in the order it handled them.
std::vector<std::vector<Handled>> by_entity(const std::vector<Handled>& log, EntityId entities) {
  std::vector<std::vector<Handled>> out(entities);
  for (const Handled& h : log) out[h.target].push_back(h);
  return out;
}

TEST(Simulator, AtomOrderGivesEveryEntityTheEventsTimeOrderDoes) {
  constexpr std::size_t kAtoms = 40;
  constexpr EntityId kPerAtom = 3;
  constexpr EntityId kEntities = kAtoms * kPerAtom;
  constexpr Time kLatency = 1'000;
  const Layout layout = ring_of_atoms(kAtoms, kPerAtom, kLatency);
  const Partition partition = Partition::from_strategy(layout, 1, Strategy::kBlock);
  const Comm comm = Comm::self();
  std::vector<AtomModel> models;
  std::vector<RunSummary> summaries;
  for (const EventOrder order : {EventOrder::kTime, EventOrder::kAtom}) {
    EngineOptions options;
    options.seed = 7;
    options.end_time = 200'000;
    options.progress = false;
    options.order = order;
    Simulator sim(comm, layout, partition, options);
    Rng init(7, 999'999);
    for (int i = 0; i < 300; ++i) {
      const auto source = static_cast<EntityId>(init.below(kEntities));
      const auto target = static_cast<EntityId>(init.below(kEntities));
      sim.schedule_initial(source, target, static_cast<Time>(init.below(5'000)), 9, 0);
    }
    models.push_back({kPerAtom, kEntities, kLatency, {}, std::vector<Time>(kEntities, 0), 0});
    summaries.push_back(sim.run(models.back()));
  }
  EXPECT_EQ(summaries[0].sub_window, 0);
  EXPECT_EQ(summaries[1].sub_window, kLatency);
  EXPECT_GT(summaries[0].events, 50'000);
  EXPECT_EQ(summaries[1].events, summaries[0].events);
  EXPECT_EQ(summaries[1].simulated_time, summaries[0].simulated_time);
  EXPECT_NE(models[1].log, models[0].log);  // the rank's order differs ...
  EXPECT_EQ(by_entity(models[1].log, kEntities),
            by_entity(models[0].log, kEntities));  // ... each entity's not
  EXPECT_EQ(models[0].broken, 0);
  EXPECT_EQ(models[1].broken, 0);
}

TEST(Simulator, AtomOrderRefusesAnEventToAnotherAtomInsideTheSubWindow) {
  const Layout layout = ring_of_atoms(4, 2, 1'000);
  const Partition partition = Partition::from_strategy(layout, 1, Strategy::kBlock);
  EngineOptions options;
  options.progress = false;
  options.order = EventOrder::kAtom;
  const Comm comm = Comm::self();
  Simulator sim(comm, layout, partition, options);
  sim.schedule_initial(0, 0, 10, 0, 0);
  Recorder model;
  model.react = [](const Event& e, Simulator& s) {
    if (e.target == 0) s.send(1, 5, 0, 0);    // its own atom: any delay
    if (e.target == 1) s.send(2, 990, 0, 0);  // atom 1 at 1,005 ps: inside [10, 1,010)
  };
  const std::string what = error_of([&] { sim.run(model); });
  EXPECT_TRUE(contains(what, "entity 1 sent an event to entity 2 of another atom")) << what;
  EXPECT_TRUE(contains(what, "atoms' lookahead of 1 ns")) << what;
}

TEST(Simulator, AtomOrderFallsBackToTimeOrderWithoutLinksBetweenAtoms) {
  World w(5);
  w.options.order = EventOrder::kAtom;
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(0, 1, 10, 0, 0);
  Recorder model;
  EXPECT_EQ(sim.run(model).sub_window, 0);
  EXPECT_EQ(model.log.size(), 1u);
}

}  // namespace
}  // namespace shoal::core
