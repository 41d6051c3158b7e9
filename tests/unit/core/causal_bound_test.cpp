// The busiest rank's clock in an engine without windows (core/causal_bound.hpp),
// on hand-made sequences of events.
#include "shoal/core/causal_bound.hpp"

#include <gtest/gtest.h>

namespace shoal::core {
namespace {

TEST(CausalBound, OnePartAddsItsEvents) {
  CausalBound bound(1, kTimeInfinity);
  bound.handled(0, 0, 3);
  bound.handled(7, 0, 4);
  EXPECT_EQ(bound.busiest(), 7u);
}

TEST(CausalBound, PartsNoLinkJoinsNeverWait) {
  CausalBound bound(2, kTimeInfinity);
  bound.handled(0, 0, 5);
  bound.handled(100, 1, 2);
  bound.handled(200, 1, 2);
  EXPECT_EQ(bound.busiest(), 5u);
}

TEST(CausalBound, WaitsOnlyForWhatCouldReachTheEvent) {
  // Lookahead 10: an event at t waits for the other part's events at t - 10
  // or earlier. Windows [0,10) [10,20) ... would take 10 + 10 + ... here.
  CausalBound bound(2, 10);
  bound.handled(0, 1, 1);   // part 1: 1
  bound.handled(9, 0, 10);  // part 0: 10
  // Part 1 at 10 waits for part 0's events at 0 or earlier: none. Not for
  // the one at 9, which can reach it no sooner than 19.
  bound.handled(10, 1, 10);
  EXPECT_EQ(bound.busiest(), 11u);
  // At 19 it waits for part 0's event at 9, done at 10; it is at 11 anyway.
  bound.handled(19, 1, 1);
  EXPECT_EQ(bound.busiest(), 12u);
  // Part 0 at 25 waits for part 1's events at 15 or earlier: the one at 10,
  // done at 11; part 0 was idle from 10.
  bound.handled(25, 0, 1);
  EXPECT_EQ(bound.busiest(), 12u);
  // Part 0 at 29 waits for part 1's event at 19, done at 12.
  bound.handled(29, 0, 5);
  EXPECT_EQ(bound.busiest(), 17u);
}

TEST(CausalBound, AnEventAtExactlyALookaheadLaterWaits) {
  // What part 0 sends at 0 can arrive at 5, and sort before an event there.
  CausalBound bound(2, 5);
  bound.handled(0, 0, 8);
  bound.handled(5, 1, 1);
  EXPECT_EQ(bound.busiest(), 9u);
}

TEST(CausalBound, WaitsForTheLatestOfTheOtherParts) {
  CausalBound bound(3, 1);
  bound.handled(0, 0, 4);
  bound.handled(0, 1, 9);
  bound.handled(0, 2, 2);
  // Part 1 waits for parts 0 and 2 (4 and 2), not for itself.
  bound.handled(1, 1, 1);
  EXPECT_EQ(bound.busiest(), 10u);
  // Part 2 waits for part 1's events at 0 (done at 9), not the one at 1.
  bound.handled(1, 2, 1);
  EXPECT_EQ(bound.busiest(), 10u);
  bound.handled(2, 0, 1);  // waits for part 1's event at 1 (done at 10)
  EXPECT_EQ(bound.busiest(), 11u);
}

TEST(CausalBound, HoldsManyEventsWithinALookahead) {
  // 1,000 events at one time, more than the ring first holds, then one
  // a lookahead later that waits for all of the other part's.
  CausalBound bound(2, 1);
  for (int i = 0; i < 1000; ++i) bound.handled(0, static_cast<std::uint16_t>(i % 2), 1);
  EXPECT_EQ(bound.busiest(), 500u);
  bound.handled(1, 0, 1);
  EXPECT_EQ(bound.busiest(), 501u);
  for (int i = 0; i < 3000; ++i) bound.handled(2 + i / 1000, 1, 1);
  EXPECT_EQ(bound.busiest(), 3501u);
}

}  // namespace
}  // namespace shoal::core
