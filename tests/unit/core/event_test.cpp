// The event key: (time, source entity, source sequence) packed into time + tiebreak.
#include "shoal/core/event.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace shoal::core {
namespace {

Event make(Time time, EntityId source, std::uint64_t sequence) {
  Event e;
  e.time = time;
  e.tiebreak = make_tiebreak(source, sequence);
  return e;
}

TEST(Event, LayoutConstants) {
  static_assert(sizeof(Event) == 32);
  EXPECT_EQ(kSequenceBits, 40);
  EXPECT_EQ(kMaxSequence, (std::uint64_t{1} << 40) - 1);
  EXPECT_EQ(kMaxEntities, std::uint64_t{1} << 24);
}

TEST(Event, TiebreakRoundTrip) {
  static_assert(make_tiebreak(0, 0) == 0);
  static_assert(make_tiebreak(1, 0) == (std::uint64_t{1} << 40));
  static_assert(make_tiebreak(3, 5) == ((std::uint64_t{3} << 40) | 5));
  const std::uint64_t sequences[] = {0, 1, 2, 12345, kMaxSequence - 1, kMaxSequence};
  const EntityId sources[] = {0, 1, 7, 65'535, static_cast<EntityId>(kMaxEntities - 1)};
  for (const EntityId source : sources) {
    for (const std::uint64_t sequence : sequences) {
      const Event e = make(42, source, sequence);
      EXPECT_EQ(e.source(), source) << source << "/" << sequence;
      EXPECT_EQ(e.sequence(), sequence) << source << "/" << sequence;
    }
  }
}

TEST(Event, DefaultIsAllZero) {
  const Event e;
  EXPECT_EQ(e.time, 0);
  EXPECT_EQ(e.tiebreak, 0u);
  EXPECT_EQ(e.target, 0u);
  EXPECT_EQ(e.tag, 0u);
  EXPECT_EQ(e.payload, 0u);
  EXPECT_EQ(e.source(), 0u);
  EXPECT_EQ(e.sequence(), 0u);
}

TEST(Event, BeforeOrdersByTimeFirst) {
  // An earlier time wins whatever the source and sequence.
  EXPECT_TRUE(before(make(1, 99, 99), make(2, 0, 0)));
  EXPECT_FALSE(before(make(2, 0, 0), make(1, 99, 99)));
  EXPECT_TRUE(
      before(make(0, static_cast<EntityId>(kMaxEntities - 1), kMaxSequence), make(1, 0, 0)));
}

TEST(Event, BeforeThenBySourceThenSequence) {
  EXPECT_TRUE(before(make(5, 1, 9), make(5, 2, 0)));
  EXPECT_FALSE(before(make(5, 2, 0), make(5, 1, 9)));
  EXPECT_TRUE(before(make(5, 3, 1), make(5, 3, 2)));
  EXPECT_FALSE(before(make(5, 3, 2), make(5, 3, 1)));
  // A larger source with a much smaller sequence still comes after the smaller source.
  EXPECT_TRUE(before(make(5, 1, kMaxSequence), make(5, 2, 0)));
  EXPECT_FALSE(before(make(5, 2, 0), make(5, 1, kMaxSequence)));
}

TEST(Event, BeforeIsIrreflexiveAndIgnoresTargetTagPayload) {
  Event a = make(7, 4, 4);
  Event b = a;
  b.target = 100;
  b.tag = 3;
  b.payload = 77;
  EXPECT_FALSE(before(a, a));
  EXPECT_FALSE(before(a, b));
  EXPECT_FALSE(before(b, a));
}

TEST(Event, SortByBeforeGivesLexicographicKeyOrder) {
  std::vector<Event> events;
  for (Time t : {3, 1, 2}) {
    for (EntityId s : {2u, 0u, 1u}) {
      for (std::uint64_t q : {1u, 0u}) events.push_back(make(t, s, q));
    }
  }
  std::sort(events.begin(), events.end(), before);
  ASSERT_EQ(events.size(), 18u);
  std::size_t i = 0;
  for (Time t = 1; t <= 3; ++t) {
    for (EntityId s = 0; s <= 2; ++s) {
      for (std::uint64_t q = 0; q <= 1; ++q, ++i) {
        EXPECT_EQ(events[i].time, t) << i;
        EXPECT_EQ(events[i].source(), s) << i;
        EXPECT_EQ(events[i].sequence(), q) << i;
      }
    }
  }
}

}  // namespace
}  // namespace shoal::core
