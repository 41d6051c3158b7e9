// BucketSorter against std::sort by the event key: the same events, field for
// field, in the same order, over the shapes of bucket it takes and the ones it
// declines.
#include "shoal/core/bucket_sort.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
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

::testing::AssertionResult sorts_like_std_sort(const std::vector<Event>& events,
                                               BucketSorter& sorter) {
  std::vector<Event> expected = events;
  std::sort(expected.begin(), expected.end(),
            [](const Event& a, const Event& b) { return before(a, b); });
  EventBuffer bucket = to_buffer(events);
  EventBuffer out;
  if (!sorter.sort(bucket, out)) return ::testing::AssertionFailure() << "declined";
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

::testing::AssertionResult sorts_like_std_sort(const Shape& shape, std::uint64_t seed) {
  BucketSorter sorter;
  return sorts_like_std_sort(make_bucket(shape, seed), sorter);
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
  for (const std::size_t times : {2u, 3u, 7u, 8u, 9u, 24u, 100u, 255u, 256u}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      EXPECT_TRUE(sorts_like_std_sort({600, times, 300, 7, false}, seed)) << times;
    }
  }
}

// Few sources for the bucket's size take one counting pass on (time, source);
// many take byte-wide passes on the source, then one on the time: both ways.
TEST(BucketSort, OnePassAndBytePasses) {
  for (const EntityId sources : {60u, 700u, 5000u}) {
    for (const std::size_t times : {1u, 2u, 8u, 40u}) {
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
  BucketSorter sorter;
  EXPECT_FALSE(sorter.sort(bucket, out));
  EXPECT_TRUE(out.empty());
}

// The times' table is emptied after every bucket, sorted or declined: one
// sorter over buckets of different times gives each its own ranks.
TEST(BucketSort, OneSorterForManyBuckets) {
  BucketSorter sorter;
  Rng rng(42, 0);
  for (std::uint64_t round = 0; round < 60; ++round) {
    const std::size_t times = 1 + rng.below(round % 3 == 0 ? 1000 : 60);
    std::vector<Event> events = make_bucket({800, times, 200, 3, round % 2 == 1}, round);
    const Time shift = static_cast<Time>(rng.below(1'000'000)) * 7;  // times no bucket had before
    for (Event& e : events) e.time += shift;
    std::vector<Time> seen;  // the times drawn, not all those offered
    for (const Event& e : events) seen.push_back(e.time);
    std::sort(seen.begin(), seen.end());
    const auto distinct =
        static_cast<std::size_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
    EventBuffer bucket = to_buffer(events);
    EventBuffer out;
    if (distinct > BucketSorter::kMaxTimes) {
      EXPECT_FALSE(sorter.sort(bucket, out)) << distinct;
      EXPECT_EQ(bucket.size(), events.size());
    } else {
      EXPECT_TRUE(sorts_like_std_sort(events, sorter)) << "round " << round << ", " << distinct;
    }
  }
}

// Consecutive buckets that share times, each at another rank in its own
// bucket (as the queue's neighbouring buckets do): a time the sorter kept from
// the bucket before would be taken as this one's and sort out of place.
TEST(BucketSort, BucketsSharingTimes) {
  BucketSorter sorter;
  for (std::uint64_t round = 0; round < 8; ++round) {
    std::vector<Event> events = make_bucket({400, 12, 50, 0, false}, 100 + round);
    // Round r's times are 1,000,000 + 3 t - 9 r: four times in common with the round before.
    for (Event& e : events) e.time -= 9 * static_cast<Time>(round);
    EXPECT_TRUE(sorts_like_std_sort(events, sorter)) << "round " << round;
  }
}

// Times far apart and near the ends of the range hash like any others.
TEST(BucketSort, TimesFarApart) {
  BucketSorter sorter;
  std::vector<Event> events = make_bucket({400, 50, 30, 0, false}, 9);
  for (Event& e : events) {
    const Time rank = (e.time - 1'000'000) / 3;
    e.time = rank % 2 == 0 ? rank << 40 : std::numeric_limits<Time>::max() - rank;
  }
  EXPECT_TRUE(sorts_like_std_sort(events, sorter));
}

// More than kMaxTimes times, sources spanning 2^16 ids or more, or the time
// that marks a free slot in the times' table: declined, the bucket untouched.
TEST(BucketSort, DeclinesManyTimesWideSourceSpansAndTheLeastTime) {
  BucketSorter sorter;
  for (int which = 0; which < 4; ++which) {
    const Shape shape = which == 0   ? Shape{3000, BucketSorter::kMaxTimes + 1, 10, 0, false}
                        : which == 1 ? Shape{300, 1, 70'000, 0, false}
                                     : Shape{300, 3, 10, 0, false};
    std::vector<Event> events = make_bucket(shape, 3);
    if (which == 0) {  // make sure every time is there
      for (std::size_t t = 0; t < shape.times; ++t) events[t].time = 1'000'000 + 3 * Time(t);
    }
    if (which == 1) {  // make sure the span is over 2^16
      events.front().tiebreak = make_tiebreak(0, 0);
      events.back().tiebreak = make_tiebreak(65536, 0);
    }
    if (which == 2) events[100].time = std::numeric_limits<Time>::min();
    if (which == 3) events[0].time = std::numeric_limits<Time>::min();
    EventBuffer bucket = to_buffer(events);
    EventBuffer out;
    EXPECT_FALSE(sorter.sort(bucket, out)) << which;
    ASSERT_EQ(bucket.size(), events.size());
    EXPECT_TRUE(out.empty());
    for (std::size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(bucket[i].time, events[i].time) << i;
      EXPECT_EQ(bucket[i].tiebreak, events[i].tiebreak) << i;
      EXPECT_EQ(bucket[i].payload, events[i].payload) << i;
    }
  }
  // ... and the sorter still sorts after declining.
  EXPECT_TRUE(sorts_like_std_sort(make_bucket({500, 30, 100, 0, true}, 4), sorter));
}

}  // namespace
}  // namespace shoal::core
