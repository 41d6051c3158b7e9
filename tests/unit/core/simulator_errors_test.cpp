// Engine errors on one rank (Comm::self()): events in the past or to no entity, bad
// initial events and bad engine options, each message naming what is wrong.
#include "shoal/core/simulator.hpp"

#include <gtest/gtest.h>

#include <string>

#include "error_checks.hpp"
#include "shoal/core/partition.hpp"
#include "simulator_test_support.hpp"

namespace shoal::core {
namespace {

using namespace simulator_test;
using shoal::test::error_of;

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

}  // namespace
}  // namespace shoal::core
