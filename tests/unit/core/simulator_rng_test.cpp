// Engine random streams on one rank (Comm::self()): each entity's stream is the Rng of
// the seed and the entity, before and during a run.
#include "shoal/core/simulator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "shoal/core/random.hpp"
#include "simulator_test_support.hpp"

namespace shoal::core {
namespace {

using namespace simulator_test;

TEST(Simulator, EntityStreamIsRngOfSeedAndEntity) {
  constexpr std::uint64_t kSeed = 1234;
  World w(4, kTimeInfinity, kSeed);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  // Before run(): the stream of each entity.
  for (EntityId e = 0; e < 4; ++e) {
    Rng fresh(kSeed, e);
    Rng copy = sim.rng(e);
    EXPECT_EQ(copy.next(), fresh.next()) << e;
  }
  // Inside handle(): rng() is the current entity's stream, continuing across its events.
  for (EntityId e = 0; e < 4; ++e) {
    sim.schedule_initial(e, e, 10, 0, 0);
    sim.schedule_initial(e, 3 - e, 20, 0, 0);
  }
  std::vector<std::vector<std::uint64_t>> draws(4);
  Recorder model;
  model.react = [&](const Event& e, Simulator& s) {
    draws[e.target].push_back(s.rng().next());
    EXPECT_EQ(&s.rng(), &s.rng(e.target));
  };
  sim.run(model);
  for (EntityId e = 0; e < 4; ++e) {
    Rng expected(kSeed, e);
    ASSERT_EQ(draws[e].size(), 2u) << e;
    EXPECT_EQ(draws[e][0], expected.next()) << e;
    EXPECT_EQ(draws[e][1], expected.next()) << e;
  }
}

TEST(Simulator, DifferentSeedsGiveDifferentStreams) {
  World a(1, kTimeInfinity, 1);
  World b(1, kTimeInfinity, 2);
  Simulator sa(a.comm, a.layout, a.partition, a.options);
  Simulator sb(b.comm, b.layout, b.partition, b.options);
  EXPECT_NE(sa.rng(0).next(), sb.rng(0).next());
}

}  // namespace
}  // namespace shoal::core
