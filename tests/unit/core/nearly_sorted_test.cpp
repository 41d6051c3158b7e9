// sort_nearly_sorted: atom order's sort of an atom's events, which the queue
// hands over nearly in key order, must give exactly the key order whatever
// the input, including the worst (reversed), where it falls back to std::sort.
#include "shoal/core/nearly_sorted.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "shoal/core/random.hpp"

namespace shoal::core {
namespace {

/// Events of a few distinct times and many sources, each key unique.
std::vector<Event> sorted_events(std::size_t n, Rng& rng) {
  std::vector<Event> events(n);
  for (std::size_t i = 0; i < n; ++i) {
    events[i].time = static_cast<Time>(rng.below(4)) * 1'000'000 + 1;
    events[i].tiebreak = make_tiebreak(static_cast<EntityId>(rng.below(50)), i);
    events[i].payload = i;
  }
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return before(a, b); });
  return events;
}

bool in_key_order(const std::vector<Event>& events) {
  return std::is_sorted(events.begin(), events.end(),
                        [](const Event& a, const Event& b) { return before(a, b); });
}

TEST(NearlySorted, KeyBeforeIsBefore) {
  Rng rng(1, 0);
  const std::vector<Event> events = sorted_events(200, rng);
  for (const Event& a : events) {
    for (const Event& b : events) EXPECT_EQ(key_before(a, b), before(a, b));
  }
  Event late{};
  late.time = kTimeInfinity - 1;
  Event early{};
  early.time = 0;
  early.tiebreak = ~std::uint64_t{0};
  EXPECT_TRUE(key_before(early, late));
  EXPECT_FALSE(key_before(late, early));
}

TEST(NearlySorted, SortsWhateverTheDisorder) {
  Rng rng(2, 0);
  for (const std::size_t n : {0, 1, 2, 7, 64, 1000}) {
    for (const int swaps : {0, 1, 5, 100, -1}) {  // -1: reversed
      SCOPED_TRACE("n " + std::to_string(n) + ", swaps " + std::to_string(swaps));
      const std::vector<Event> expected = sorted_events(n, rng);
      std::vector<Event> events = expected;
      if (swaps < 0) {
        std::reverse(events.begin(), events.end());
      } else if (n > 1) {
        for (int s = 0; s < swaps; ++s) {
          const std::size_t i = rng.below(n);
          const std::size_t j = std::min(n - 1, i + rng.below(20));
          std::swap(events[i], events[j]);
        }
      }
      sort_nearly_sorted(events);
      ASSERT_TRUE(in_key_order(events));
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(events[i].payload, expected[i].payload) << i;
    }
  }
}

}  // namespace
}  // namespace shoal::core
