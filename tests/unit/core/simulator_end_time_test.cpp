// Engine end time on one rank (Comm::self()): the end time is exclusive, the simulated
// time a run reports, runs to exhaustion and times that saturate.
#include "shoal/core/simulator.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "simulator_test_support.hpp"

namespace shoal::core {
namespace {

using namespace simulator_test;

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

}  // namespace
}  // namespace shoal::core
