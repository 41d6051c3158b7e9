// The busiest rank's clock in an engine that knew which events reach each
// rank (core/critical_path.hpp), on hand-made sequences of events.
#include "shoal/core/critical_path.hpp"

#include <gtest/gtest.h>

namespace shoal::core {
namespace {

TEST(CriticalPath, EachPartAddsItsOwnEvents) {
  CriticalPath path(2);
  path.handled(1, 0, false, 5);
  path.handled(2, 1, false, 3);
  path.handled(3, 0, false, 2);
  EXPECT_EQ(path.busiest(), 7u);
}

TEST(CriticalPath, AnEventFromAnotherPartWaitsForTheOneThatSentIt) {
  CriticalPath path(2);
  path.handled(1, 1, false, 2);  // part 1: 2
  path.sends_across(10);         // part 0's first event sends event 10 to part 1
  path.handled(2, 0, false, 6);  // part 0: 6
  path.handled(3, 1, false, 1);  // part 1: 3, not waiting
  path.handled(10, 1, true, 1);  // waits for event 2, done at 6: 7
  EXPECT_EQ(path.busiest(), 7u);
  // An event from another part whose sender was not seen (an initial one)
  // waits for nothing.
  path.handled(11, 0, true, 1);
  EXPECT_EQ(path.busiest(), 7u);
}

TEST(CriticalPath, WaitsNoLongerThanItsOwnPartIsBusy) {
  CriticalPath path(2);
  path.sends_across(10);
  path.handled(1, 0, false, 1);  // sends event 10, done at 1
  path.handled(2, 1, false, 9);  // part 1 busy until 9
  path.handled(10, 1, true, 1);  // its sender was done long before: 10
  EXPECT_EQ(path.busiest(), 10u);
}

}  // namespace
}  // namespace shoal::core
