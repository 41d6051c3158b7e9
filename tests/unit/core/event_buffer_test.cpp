// EventBuffer: what goes in comes out, across growth, appends and swaps; a
// cleared buffer keeps a small block and gives a large one back.
#include "shoal/core/event_buffer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace shoal::core {
namespace {

Event numbered(std::uint64_t i) {
  return Event{static_cast<Time>(i * 3), make_tiebreak(static_cast<EntityId>(i % 7), i),
               static_cast<EntityId>(i), static_cast<std::uint32_t>(i * 5), i * 11};
}

void expect_numbered(const EventBuffer& b, std::uint64_t from, std::uint64_t count) {
  ASSERT_EQ(b.size(), count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const Event want = numbered(from + i);
    const Event& got = b[i];
    ASSERT_EQ(got.time, want.time) << i;
    ASSERT_EQ(got.tiebreak, want.tiebreak) << i;
    ASSERT_EQ(got.target, want.target) << i;
    ASSERT_EQ(got.tag, want.tag) << i;
    ASSERT_EQ(got.payload, want.payload) << i;
  }
}

TEST(EventBuffer, PushAndEmplaceKeepEveryFieldAcrossGrowth) {
  EventBuffer b;
  for (std::uint64_t i = 0; i < 10'000; ++i) {
    const Event e = numbered(i);
    if (i % 2 == 0) {
      b.push_back(e);
    } else {
      b.emplace_back(e.time, e.tiebreak, e.target, e.tag, e.payload);
    }
  }
  expect_numbered(b, 0, 10'000);
  b.pop_back();
  EXPECT_EQ(b.back().payload, numbered(9'998).payload);
}

TEST(EventBuffer, AppendShrinkAndSwap) {
  std::vector<Event> source;
  for (std::uint64_t i = 0; i < 300; ++i) source.push_back(numbered(i));
  EventBuffer a, b;
  a.append(source.data(), source.data() + 100);
  a.append(source.data() + 100, source.data() + 300);
  expect_numbered(a, 0, 300);
  a.shrink_to(40);
  expect_numbered(a, 0, 40);
  b.push_back(numbered(7));
  a.swap(b);
  expect_numbered(a, 7, 1);
  expect_numbered(b, 0, 40);
}

TEST(EventBuffer, ClearKeepsASmallBlockAndGivesBackALargeOne) {
  EventBuffer small, large;
  for (std::uint64_t i = 0; i < 100; ++i) small.push_back(numbered(i));
  for (std::uint64_t i = 0; i <= EventBuffer::kKept; ++i) large.push_back(numbered(i));
  const std::size_t kept = small.capacity();
  small.clear();
  large.clear();
  EXPECT_TRUE(small.empty());
  EXPECT_EQ(small.capacity(), kept);
  EXPECT_TRUE(large.empty());
  EXPECT_EQ(large.capacity(), 0u);
  large.push_back(numbered(3));  // usable again after giving its block back
  expect_numbered(large, 3, 1);
}

}  // namespace
}  // namespace shoal::core
