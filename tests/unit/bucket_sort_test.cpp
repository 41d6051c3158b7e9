// sort_bucket against std::sort by the event key: the same events, field for
// field, in the same order, over the shapes of bucket it takes and the ones it
// declines.
#include "shoal/core/bucket_sort.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/core/random.hpp"

namespace shoal::core {
namespace {

struct Shape {
  std::size_t events;
  std::size_t times;  // distinct times
  EntityId sources;   // sources drawn from [first_source, first_source + sources)
  EntityId first_source;
  bool scrambled;  // a source's sequence numbers pushed in random order, not increasing
};

std::vector<Event> make_bucket(const Shape& shape, std::uint64_t seed) {
  Rng rng(seed, 0);
  std::vector<Time> times;
  for (std::size_t t = 0; t < shape.times; ++t)
    times.push_back(1'000'000 + 3 * static_cast<Time>(t));
  // By source and stream: each of a source's streams numbers its own events.
  std::vector<std::uint64_t> next_sequence(std::size_t{shape.sources} * kStreams, 0);
  std::vector<Event> events;
  for (std::size_t i = 0; i < shape.events; ++i) {
    const auto s = static_cast<EntityId>(rng.below(shape.sources));
    const auto stream = static_cast<std::uint32_t>(rng.below(kStreams));
    std::uint64_t& sequence = next_sequence[std::size_t{s} * kStreams + stream];
    Event e;
    e.time = times[rng.below(times.size())];
    e.tiebreak = make_tiebreak(shape.first_source + s, stream, sequence);
    sequence += 1 + rng.below(5);
    e.target = static_cast<EntityId>(rng.below(1000));
    e.tag = static_cast<std::uint32_t>(i);
    e.payload = rng.next();
    events.push_back(e);
  }
  if (shape.scrambled) {
    // Sequence numbers of one source swapped among its events, so they no
    // longer rise in push order (as after a re-spread of the late heap).
    for (std::size_t i = events.size(); i > 1; --i) {
      const std::size_t j = rng.below(i);
      if (events[i - 1].source() == events[j].source()) {
        std::swap(events[i - 1].tiebreak, events[j].tiebreak);
      }
    }
    for (std::size_t i = 0; i + 1 < events.size(); ++i) {
      if (events[i].source() == events[i + 1].source()) {
        std::swap(events[i].tiebreak, events[i + 1].tiebreak);
      }
    }
  }
  return events;
}

EventBuffer to_buffer(const std::vector<Event>& events) {
  EventBuffer b;
  b.append(events.data(), events.data() + events.size());
  return b;
}

::testing::AssertionResult sorts_like_std_sort(const Shape& shape, std::uint64_t seed) {
  const std::vector<Event> events = make_bucket(shape, seed);
  std::vector<Event> expected = events;
  std::sort(expected.begin(), expected.end(),
            [](const Event& a, const Event& b) { return before(a, b); });
  EventBuffer bucket = to_buffer(events);
  EventBuffer out;
  std::vector<std::uint32_t> counts;
  if (!sort_bucket(bucket, out, counts)) return ::testing::AssertionFailure() << "declined";
  if (!bucket.empty()) return ::testing::AssertionFailure() << "the bucket was not emptied";
  if (out.size() != expected.size()) {
    return ::testing::AssertionFailure() << out.size() << " events out of " << expected.size();
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Event& a = out[i];
    const Event& b = expected[i];
    if (a.time != b.time || a.tiebreak != b.tiebreak || a.target != b.target || a.tag != b.tag ||
        a.payload != b.payload) {
      return ::testing::AssertionFailure()
             << "at " << i << ": time " << a.time << " source " << a.source() << " seq "
             << a.sequence() << ", expected time " << b.time << " source " << b.source() << " seq "
             << b.sequence();
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(BucketSort, OneTimeFewSources) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    EXPECT_TRUE(sorts_like_std_sort({500, 1, 40, 0, false}, seed));
  }
}

TEST(BucketSort, OneTimeSourcesOverOneByteAndTwo) {
  for (const EntityId sources : {1u, 2u, 255u, 256u, 257u, 3000u, 65535u, 65536u}) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      EXPECT_TRUE(sorts_like_std_sort({700, 1, sources, 12345, false}, seed)) << sources;
    }
  }
}

TEST(BucketSort, SeveralTimes) {
  for (const std::size_t times : {2u, 3u, 7u, 8u}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      EXPECT_TRUE(sorts_like_std_sort({600, times, 300, 7, false}, seed)) << times;
    }
  }
}

// Few sources for the bucket's size take one counting pass on (time, source);
// many take byte-wide passes on the source, then one on the time: both ways.
TEST(BucketSort, OnePassAndBytePasses) {
  for (const EntityId sources : {60u, 700u, 5000u}) {
    for (const std::size_t times : {1u, 2u, 8u}) {
      for (const bool scrambled : {false, true}) {
        EXPECT_TRUE(sorts_like_std_sort({300, times, sources, 250, scrambled}, sources + times))
            << sources << " sources, " << times << " times, scrambled " << scrambled;
      }
    }
  }
}

TEST(BucketSort, SequencesOutOfOrderWithinASource) {
  for (const EntityId sources : {1u, 5u, 200u, 1000u}) {
    for (const std::size_t times : {1u, 4u}) {
      for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        EXPECT_TRUE(sorts_like_std_sort({400, times, sources, 0, true}, seed))
            << sources << " sources, " << times << " times";
      }
    }
  }
}

TEST(BucketSort, LargeBucketsAndSmallOnes) {
  for (const std::size_t n : {1u, 2u, 47u, 48u, 20'000u}) {
    EXPECT_TRUE(sorts_like_std_sort({n, 3, 2000, 100, true}, n)) << n;
  }
}

TEST(BucketSort, DeclinesAnEmptyBucket) {
  EventBuffer bucket, out;
  std::vector<std::uint32_t> counts;
  EXPECT_FALSE(sort_bucket(bucket, out, counts));
  EXPECT_TRUE(out.empty());
}

TEST(BucketSort, DeclinesNineTimesAndWideSourceSpans) {
  for (const Shape shape : {Shape{300, 9, 10, 0, false}, Shape{300, 1, 70'000, 0, false}}) {
    std::vector<Event> events = make_bucket(shape, 3);
    if (shape.sources > 65536) {  // make sure the span is over 2^16
      events.front().tiebreak = make_tiebreak(0, 0);
      events.back().tiebreak = make_tiebreak(65536, 0);
    }
    EventBuffer bucket = to_buffer(events);
    EventBuffer out;
    std::vector<std::uint32_t> counts;
    EXPECT_FALSE(sort_bucket(bucket, out, counts));
    ASSERT_EQ(bucket.size(), events.size());
    EXPECT_TRUE(out.empty());
    for (std::size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(bucket[i].tiebreak, events[i].tiebreak) << i;
      EXPECT_EQ(bucket[i].payload, events[i].payload) << i;
    }
  }
}

}  // namespace
}  // namespace shoal::core
