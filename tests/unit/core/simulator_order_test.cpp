// Engine event order on one rank (Comm::self()): simultaneous events by source and
// sequence, zero-delay sends, several sends from one handler, and streams' keys.
#include "shoal/core/simulator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "shoal/core/event.hpp"
#include "simulator_test_support.hpp"

namespace shoal::core {
namespace {

using namespace simulator_test;
using shoal::test::error_of;

TEST(Simulator, EmptySimulation) {
  World w(4);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  Recorder model;
  const RunSummary s = sim.run(model);
  EXPECT_TRUE(model.log.empty());
  EXPECT_EQ(s.events, 0);
  EXPECT_EQ(s.remote_events, 0);
  EXPECT_EQ(s.simulated_time, 0);
  EXPECT_EQ(s.windows, 0);
  EXPECT_EQ(s.ranks, 1);
  EXPECT_EQ(s.partition, "block");
  EXPECT_EQ(s.lookahead, kTimeInfinity);
  EXPECT_EQ(sim.local_events(), 0);
}

TEST(Simulator, SimultaneousEventsInSourceThenSequenceOrder) {
  const std::vector<Handled> expected = {
      {0, 5, 4, 0, 0, 40},  {0, 10, 0, 0, 0, 0},  {0, 10, 1, 0, 0, 10}, {0, 10, 1, 1, 0, 11},
      {0, 10, 2, 0, 0, 20}, {0, 10, 3, 0, 0, 30}, {0, 10, 5, 0, 0, 50},
  };
  // The same events scheduled in two different orders (each source's own events keep
  // their relative order, which fixes their sequence numbers).
  const std::vector<std::vector<int>> orders = {{3, 1, 5, 1, 0, 2, 4}, {4, 2, 0, 1, 5, 1, 3}};
  for (const auto& order : orders) {
    World w(6);
    Simulator sim(w.comm, w.layout, w.partition, w.options);
    std::vector<int> count(6, 0);
    for (const int source : order) {
      const Time t = source == 4 ? 5 : 10;
      sim.schedule_initial(static_cast<EntityId>(source), 0, t, 0,
                           static_cast<std::uint64_t>(source * 10 + count[source]++));
    }
    Recorder model;
    const RunSummary s = sim.run(model);
    EXPECT_EQ(model.log, expected);
    EXPECT_EQ(s.events, 7);
    EXPECT_EQ(s.simulated_time, 10);
  }
}

TEST(Simulator, ZeroDelaySelfEventIsHandledAfterTheCurrentOne) {
  World w(6);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(5, 0, 10, 9, 0);  // a later source at the same time
  sim.schedule_initial(0, 0, 10, 1, 0);
  Recorder model;
  model.react = [](const Event& e, Simulator& s) {
    if (e.tag == 1) s.send(0, 0, 2, 0);
    if (e.tag == 2 && e.payload < 3) s.send(0, 0, 2, e.payload + 1);
  };
  const RunSummary s = sim.run(model);
  const std::vector<Handled> expected = {
      {0, 10, 0, 0, 1, 0}, {0, 10, 0, 1, 2, 0}, {0, 10, 0, 2, 2, 1},
      {0, 10, 0, 3, 2, 2}, {0, 10, 0, 4, 2, 3}, {0, 10, 5, 0, 9, 0},
  };
  EXPECT_EQ(model.log, expected);
  EXPECT_EQ(s.events, 6);
  EXPECT_EQ(s.simulated_time, 10);
}

TEST(Simulator, ZeroDelayEventWithASmallerKeyThanTheCurrentOne) {
  // Entity 0 handles an event from entity 5 and sends itself one at the same time:
  // key (10, 0, 0) is smaller than the current (10, 5, 0), yet it was caused by it,
  // so it comes after it, exactly once each.
  World w(6);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(5, 0, 10, 1, 0);
  Recorder model;
  model.react = [](const Event& e, Simulator& s) {
    if (e.tag == 1) s.send(0, 0, 2, 0);
  };
  const RunSummary s = sim.run(model);
  const std::vector<Handled> expected = {{0, 10, 5, 0, 1, 0}, {0, 10, 0, 0, 2, 0}};
  EXPECT_EQ(model.log, expected);
  EXPECT_EQ(s.events, 2);
}

TEST(Simulator, ZeroDelayEventsJoinTheCurrentTimeInKeyOrder) {
  World w(4);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(2, 1, 10, 0, 0);  // key (2, 0)
  sim.schedule_initial(1, 1, 10, 0, 0);  // key (1, 0)
  sim.schedule_initial(0, 3, 10, 0, 0);  // key (0, 0)
  Recorder model;
  model.react = [](const Event& e, Simulator& s) {
    if (e.tag != 0) return;
    if (e.target == 3) s.send(1, 0, 7, 0);                     // key (3, 0): after (2, 0)
    if (e.target == 1 && e.source() == 1) s.send(0, 0, 8, 0);  // key (1, 1): before (2, 0)
  };
  sim.run(model);
  const std::vector<Handled> expected = {
      {3, 10, 0, 0, 0, 0}, {1, 10, 1, 0, 0, 0}, {0, 10, 1, 1, 8, 0},
      {1, 10, 2, 0, 0, 0}, {1, 10, 3, 0, 7, 0},
  };
  EXPECT_EQ(model.log, expected);
}

TEST(Simulator, SeveralSendsFromOneHandler) {
  // The first send of a handler replaces the handled event in the queue, the rest are
  // pushed; all must come out in key order.
  World w(3);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(0, 0, 100, 1, 0);
  Recorder model;
  model.react = [](const Event& e, Simulator& s) {
    if (e.tag != 1) return;
    s.send(2, 50, 2, 0);  // seq 1, t 150
    s.send(1, 0, 2, 1);   // seq 2, t 100
    s.send(2, 0, 2, 2);   // seq 3, t 100
    s.send(1, 20, 2, 3);  // seq 4, t 120
  };
  const RunSummary s = sim.run(model);
  const std::vector<Handled> expected = {
      {0, 100, 0, 0, 1, 0}, {1, 100, 0, 2, 2, 1}, {2, 100, 0, 3, 2, 2},
      {1, 120, 0, 4, 2, 3}, {2, 150, 0, 1, 2, 0},
  };
  EXPECT_EQ(model.log, expected);
  EXPECT_EQ(s.events, 5);
  EXPECT_EQ(s.simulated_time, 150);
}

TEST(Simulator, StreamsKeyTheirEventsThemselves) {
  // A model numbers some of an entity's events itself, in streams 1 and 2, in
  // increasing order within each: of one time they come after the entity's
  // own (stream 0), by stream, then by number, whether few (a small bucket,
  // sorted by comparison) or many (counting passes).
  for (const int many : {3, 200}) {
    SCOPED_TRACE(many);
    World w(3);
    Simulator sim(w.comm, w.layout, w.partition, w.options);
    sim.schedule_initial(0, 0, 100, 1, 0);
    // Other events, many at each of a few times, so that the queue lays out
    // buckets narrower than the gaps between the sent events' times and
    // sorts them by counting.
    for (Time t = 150; t < 7'000; t += 100) {
      for (int i = 0; i < 60; ++i) sim.schedule_initial(1, 1, t, 9, 0);
    }
    Recorder model;
    std::uint64_t tiebreak_seen = 0;
    model.react = [&](const Event& e, Simulator& s) {
      if (e.tag != 1) return;
      tiebreak_seen = s.current_tiebreak();
      // Stream 2 first, then 1, each in its own order; later times first.
      for (const std::uint32_t stream : {2u, 1u}) {
        for (int later = 0; later <= 5; ++later) {
          for (int i = 1; i <= many; ++i) {
            s.send_from(stream, static_cast<std::uint64_t>(7 * (later * many + i)),
                        1 + static_cast<EntityId>(i % 2), 100 + 1000 * (5 - later), 3,
                        static_cast<std::uint64_t>(i));
          }
        }
      }
      s.send(2, 100, 2, 0);  // the entity's own number 1: first at 200
    };
    const RunSummary s = sim.run(model);
    std::erase_if(model.log, [](const Handled& h) { return h.tag == 9; });
    ASSERT_EQ(model.log.size(), static_cast<std::size_t>(12 * many) + 2);
    EXPECT_EQ(tiebreak_seen, make_tiebreak(0, 0));
    EXPECT_EQ(model.log[1], (Handled{2, 200, 0, 1, 2, 0}));
    std::size_t at = 2;
    for (int later = 5; later >= 0; --later) {
      for (const std::uint32_t stream : {1u, 2u}) {
        for (int i = 1; i <= many; ++i) {
          ASSERT_LT(at, model.log.size());
          const auto number = static_cast<std::uint64_t>(7 * (later * many + i));
          EXPECT_EQ(model.log[at++],
                    (Handled{1 + static_cast<EntityId>(i % 2), 200 + 1000 * (5 - later), 0,
                             (std::uint64_t{stream} << kStreamShift) | number, 3,
                             static_cast<std::uint64_t>(i)}));
        }
      }
    }
    EXPECT_EQ(s.events, 12 * many + 2 + 69 * 60);
  }
}

TEST(Simulator, AStreamOutsideTheModelsThrows) {
  for (const std::uint32_t stream : {0u, kStreams}) {
    World w(2);
    Simulator sim(w.comm, w.layout, w.partition, w.options);
    sim.schedule_initial(0, 0, 100, 1, 0);
    Recorder model;
    model.react = [stream](const Event&, Simulator& s) { s.send_from(stream, 5, 1, 10, 2, 0); };
    const std::string message = error_of([&] { sim.run(model); });
    EXPECT_TRUE(contains(message, "event 5 of stream " + std::to_string(stream))) << message;
  }
}

}  // namespace
}  // namespace shoal::core
