// Engine edge cases on one rank (Comm::self()): event order, end time, errors, streams.
#include "shoal/core/simulator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "error_checks.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/random.hpp"

namespace shoal::core {
namespace {

using shoal::test::error_of;

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

/// One handled event as the model saw it.
struct Handled {
  EntityId target = 0;
  Time time = 0;
  EntityId source = 0;
  std::uint64_t sequence = 0;
  std::uint32_t tag = 0;
  std::uint64_t payload = 0;
  bool operator==(const Handled&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Handled& h) {
  return os << "{target " << h.target << ", time " << h.time << ", source " << h.source << ", seq "
            << h.sequence << ", tag " << h.tag << ", payload " << h.payload << "}";
}

Handled seen(const Event& e) {
  return {e.target, e.time, e.source(), e.sequence(), e.tag, e.payload};
}

/// Records every event; `react` (if set) is the model's behaviour.
struct Recorder {
  std::vector<Handled> log;
  std::function<void(const Event&, Simulator&)> react;

  void handle(const Event& e, Simulator& sim) {
    log.push_back(seen(e));
    EXPECT_EQ(sim.now(), e.time);
    EXPECT_EQ(sim.current(), e.target);
    if (react) react(e, sim);
  }
};

std::vector<std::string> names(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back("e" + std::to_string(i));
  return out;
}

/// A one-rank world of `entities` single-entity atoms.
struct World {
  explicit World(EntityId entities, Time end_time = kTimeInfinity, std::uint64_t seed = 1)
      : layout("sim-test", std::vector<EntityId>(entities, 1), names(entities)),
        partition(Partition::from_strategy(layout, 1, Strategy::kBlock)) {
    options.seed = seed;
    options.end_time = end_time;
    options.progress = false;
  }
  Comm comm = Comm::self();
  Layout layout;
  Partition partition;
  EngineOptions options;
};

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

TEST(Simulator, EndTimeIsExclusive) {
  World w(3, 100);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  EXPECT_EQ(sim.end_time(), 100);
  sim.schedule_initial(1, 1, 100, 0, 0);  // exactly at the end: not handled
  sim.schedule_initial(0, 0, 99, 0, 0);   // just before: handled
  sim.schedule_initial(2, 2, 150, 0, 0);  // after
  Recorder model;
  model.react = [](const Event& e, Simulator& s) {
    if (e.target == 0) {
      s.send(1, 1, 5, 0);  // lands at 100: not handled
      s.send(2, 0, 6, 0);  // lands at 99: handled
    }
  };
  const RunSummary s = sim.run(model);
  const std::vector<Handled> expected = {{0, 99, 0, 0, 0, 0}, {2, 99, 0, 2, 6, 0}};
  EXPECT_EQ(model.log, expected);
  EXPECT_EQ(s.events, 2);
}

TEST(Simulator, EndTimeOne) {
  World w(1, 1);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(0, 0, 0, 0, 0);
  Recorder model;
  model.react = [](const Event&, Simulator& s) { s.send(0, 1, 0, 0); };
  const RunSummary s = sim.run(model);
  ASSERT_EQ(model.log.size(), 1u);
  EXPECT_EQ(model.log[0].time, 0);
  EXPECT_EQ(s.events, 1);
}

// RunSummary::simulated_time is "end time if reached, else the last event's time":
// with events still pending at or after end_time, the run has reached the end time.
TEST(Simulator, SimulatedTimeIsEndTimeWhenEventsRemain) {
  World w(3, 100);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(0, 0, 99, 0, 0);
  sim.schedule_initial(1, 1, 100, 0, 0);
  Recorder model;
  const RunSummary s = sim.run(model);
  EXPECT_EQ(s.events, 1);
  EXPECT_EQ(s.simulated_time, 100);
}

TEST(Simulator, SimulatedTimeIsEndTimeForAnEndlessModel) {
  // A self-rescheduling entity every 10 ps, stopped by the end time.
  World w(1, 1'000);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(0, 0, 0, 0, 0);
  Recorder model;
  model.react = [](const Event&, Simulator& s) { s.send(0, 10, 0, 0); };
  const RunSummary s = sim.run(model);
  ASSERT_EQ(model.log.size(), 100u);
  EXPECT_EQ(model.log.back().time, 990);
  EXPECT_EQ(s.events, 100);
  EXPECT_EQ(s.simulated_time, 1'000);
}

TEST(Simulator, SimulatedTimeIsLastEventWhenAllDoneBeforeTheEnd) {
  World w(2, 100);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(0, 0, 5, 0, 0);
  sim.schedule_initial(1, 1, 7, 0, 0);
  Recorder model;
  const RunSummary s = sim.run(model);
  EXPECT_EQ(s.events, 2);
  EXPECT_EQ(s.simulated_time, 7);
}

TEST(Simulator, RunsToExhaustionWithoutEndTime) {
  // A token passed round a ring of five entities, 7 ps per hop, 20 hops.
  World w(5);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(0, 0, 0, 0, 0);
  Recorder model;
  model.react = [](const Event& e, Simulator& s) {
    if (e.payload < 20) s.send((e.target + 1) % 5, 7, 0, e.payload + 1);
  };
  const RunSummary s = sim.run(model);
  ASSERT_EQ(model.log.size(), 21u);
  for (std::size_t i = 0; i < model.log.size(); ++i) {
    EXPECT_EQ(model.log[i].time, static_cast<Time>(7 * i)) << i;
    EXPECT_EQ(model.log[i].target, i % 5) << i;
    EXPECT_EQ(model.log[i].payload, i) << i;
    // Sent by the previous holder (entity 0 itself for the initial event).
    EXPECT_EQ(model.log[i].source, i == 0 ? 0u : (i - 1) % 5) << i;
  }
  EXPECT_EQ(s.events, 21);
  EXPECT_EQ(s.simulated_time, 140);
  EXPECT_EQ(s.remote_events, 0);
  EXPECT_EQ(sim.local_events(), 21);
}

TEST(Simulator, HugeTimesSaturate) {
  // A delay that would overflow lands at kTimeInfinity, which is never handled.
  World w(1);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(0, 0, kTimeInfinity - 10, 0, 0);
  Recorder model;
  model.react = [](const Event&, Simulator& s) { s.send(0, 100, 0, 0); };
  const RunSummary s = sim.run(model);
  ASSERT_EQ(model.log.size(), 1u);
  EXPECT_EQ(s.events, 1);
  EXPECT_EQ(s.simulated_time, kTimeInfinity - 10);
}

TEST(Simulator, NegativeDelayThrowsFromRun) {
  World w(3);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(0, 2, 50, 0, 0);
  Recorder model;
  model.react = [](const Event&, Simulator& s) { s.send(1, -1, 0, 0); };
  const std::string msg = error_of([&] { sim.run(model); });
  EXPECT_TRUE(contains(msg, "entity 2 scheduled an event in the past (delay -1 ps)")) << msg;
}

TEST(Simulator, OutOfRangeTargetThrowsFromRun) {
  World w(3);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  sim.schedule_initial(0, 2, 50, 0, 0);
  Recorder model;
  model.react = [](const Event&, Simulator& s) { s.send(3, 1, 0, 0); };
  const std::string msg = error_of([&] { sim.run(model); });
  EXPECT_TRUE(
      contains(msg, "entity 2 sent an event to entity 3, which does not exist (3 entities)"))
      << msg;
}

TEST(Simulator, ScheduleInitialErrors) {
  World w(3);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  EXPECT_TRUE(contains(error_of([&] { sim.schedule_initial(3, 0, 0, 0, 0); }),
                       "initial event from entity 3, which this rank does not own"));
  EXPECT_TRUE(contains(error_of([&] { sim.schedule_initial(0, 7, 0, 0, 0); }),
                       "to entity 7, which does not exist (3 entities)"));
  EXPECT_TRUE(contains(error_of([&] { sim.schedule_initial(1, 0, -5, 0, 0); }), "in the past"));
}

TEST(Simulator, ScheduleInitialErrorNamesTheSource) {
  // The message must name the entity whose initial event is wrong, not entity 0.
  World w(3);
  Simulator sim(w.comm, w.layout, w.partition, w.options);
  const std::string past = error_of([&] { sim.schedule_initial(2, 0, -5, 0, 0); });
  EXPECT_TRUE(contains(past, "entity 2")) << past;
  const std::string target = error_of([&] { sim.schedule_initial(1, 9, 0, 0, 0); });
  EXPECT_TRUE(contains(target, "entity 1")) << target;
}

TEST(Simulator, ConstructorErrors) {
  World w(2);
  w.options.end_time = 0;
  EXPECT_TRUE(contains(error_of([&] { Simulator(w.comm, w.layout, w.partition, w.options); }),
                       "end time must be positive"));
  World two(2);
  const Partition for_two = Partition::from_strategy(two.layout, 2, Strategy::kBlock);
  EXPECT_TRUE(contains(error_of([&] { Simulator(two.comm, two.layout, for_two, two.options); }),
                       "is for 2 ranks, but the run has 1"));
}

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

// --- the engine against a straightforward reference ---

/// A serial reference engine: one ordered set, the same key, the same send rules.
class ReferenceSim {
 public:
  ReferenceSim(EntityId entities, std::uint64_t seed, Time end_time)
      : sequence_(entities, 0), end_time_(end_time) {
    for (EntityId e = 0; e < entities; ++e) rngs_.emplace_back(seed, e);
  }
  Time now() const { return now_; }
  EntityId current() const { return current_; }
  Rng& rng() { return rngs_[current_]; }
  void send(EntityId target, Time delay, std::uint32_t tag, std::uint64_t payload) {
    enqueue(current_, target, saturating_add(now_, delay), tag, payload);
  }
  void schedule_initial(EntityId source, EntityId target, Time time, std::uint32_t tag,
                        std::uint64_t payload) {
    enqueue(source, target, time, tag, payload);
  }
  template <class Model>
  std::int64_t run(Model& model) {
    std::int64_t events = 0;
    while (!pending_.empty()) {
      const Event e = *pending_.begin();
      pending_.erase(pending_.begin());
      now_ = e.time;
      current_ = e.target;
      model.handle(e, *this);
      ++events;
    }
    return events;
  }

 private:
  struct Before {
    bool operator()(const Event& a, const Event& b) const { return before(a, b); }
  };
  void enqueue(EntityId source, EntityId target, Time time, std::uint32_t tag,
               std::uint64_t payload) {
    const Event e{time, make_tiebreak(source, sequence_[source]++), target, tag, payload};
    if (time < end_time_) pending_.insert(e);
  }
  std::vector<Rng> rngs_;
  std::vector<std::uint64_t> sequence_;
  std::set<Event, Before> pending_;
  Time end_time_;
  Time now_ = 0;
  EntityId current_ = 0;
};

/// PHOLD-like: each event sends zero, one or two events to random entities after
/// exponential delays (often 0 ps for a small mean), drawing from the entity's stream.
struct RandomModel {
  EntityId entities = 0;
  Time mean_delay = 0;
  std::vector<Handled> log;

  template <class Sim>
  void handle(const Event& e, Sim& sim) {
    log.push_back(seen(e));
    const std::uint64_t r = sim.rng().below(10);
    const int sends = r == 0 ? 0 : (r == 1 ? 2 : 1);
    for (int k = 0; k < sends; ++k) {
      const auto target = static_cast<EntityId>(sim.rng().below(entities));
      const Time delay = sim.rng().exponential(mean_delay);
      sim.send(target, delay, static_cast<std::uint32_t>(k), e.payload + 1);
    }
  }
};

TEST(Simulator, MatchesReferenceEngine) {
  struct Case {
    EntityId entities;
    Time mean_delay;
    Time end_time;
    std::uint64_t seed;
  };
  const Case cases[] = {
      {100, 1'000, 100'000, 1},  // ordinary
      {50, 2, 2'000, 2},         // many zero delays and exact ties
      {7, 500, 300'000, 3},      // few entities, many events each
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("seed " + std::to_string(c.seed));
    World w(c.entities, c.end_time, c.seed);
    Simulator sim(w.comm, w.layout, w.partition, w.options);
    ReferenceSim ref(c.entities, c.seed, c.end_time);
    Rng init(c.seed, 999'999);
    for (int i = 0; i < 200; ++i) {
      const auto source = static_cast<EntityId>(init.below(c.entities));
      const auto target = static_cast<EntityId>(init.below(c.entities));
      const auto time = static_cast<Time>(init.below(static_cast<std::uint64_t>(c.mean_delay)));
      sim.schedule_initial(source, target, time, 9, 0);
      ref.schedule_initial(source, target, time, 9, 0);
    }
    RandomModel model{c.entities, c.mean_delay, {}};
    RandomModel expected{c.entities, c.mean_delay, {}};
    const RunSummary s = sim.run(model);
    const std::int64_t ref_events = ref.run(expected);
    EXPECT_GT(ref_events, 5'000);
    EXPECT_EQ(s.events, ref_events);
    ASSERT_EQ(model.log.size(), expected.log.size());
    for (std::size_t i = 0; i < model.log.size(); ++i) {
      ASSERT_EQ(model.log[i], expected.log[i]) << "event " << i;
    }
  }
}

// --- atom order: each atom's events as time order gives them ---

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
