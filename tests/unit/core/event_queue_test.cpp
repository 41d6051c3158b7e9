// The calendar event queue against a reference ordered set: every top() must be the
// smallest pending event by before() (time, then tiebreak), whatever the push pattern.
#include "shoal/core/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shoal/core/random.hpp"

namespace shoal::core {
namespace {

struct Before {
  bool operator()(const Event& a, const Event& b) const { return before(a, b); }
};

std::string describe(const Event& e) {
  return "{time " + std::to_string(e.time) + ", source " + std::to_string(e.source()) + ", seq " +
         std::to_string(e.sequence()) + ", payload " + std::to_string(e.payload) + "}";
}

bool same(const Event& a, const Event& b) {
  return a.time == b.time && a.tiebreak == b.tiebreak && a.target == b.target && a.tag == b.tag &&
         a.payload == b.payload;
}

/// An EventQueue and a std::set holding the same events; every operation is applied to
/// both and the queue's top and size are compared with the set's after each one.
class Checked {
 public:
  explicit Checked(std::uint64_t seed, bool pushed_in_order = false)
      : rng_(seed, 0), queue_(pushed_in_order) {}

  /// A fresh event with a unique key: a random source, a per-queue sequence number.
  Event make(Time time, EntityId sources = 1000) {
    Event e;
    e.time = time;
    e.tiebreak = make_tiebreak(static_cast<EntityId>(rng_.below(sources)), next_sequence_++);
    e.target = static_cast<EntityId>(rng_.below(64));
    e.tag = static_cast<std::uint32_t>(next_sequence_ % 7);
    e.payload = next_sequence_ * 31;
    return e;
  }

  ::testing::AssertionResult push(const Event& e) {
    queue_.push(e);
    ref_.insert(e);
    ++pushes_;
    return check("push " + describe(e));
  }

  ::testing::AssertionResult pop() {
    if (ref_.empty()) return ::testing::AssertionFailure() << "pop on an empty reference";
    const Event expected = *ref_.begin();
    const Event got = queue_.top();
    queue_.pop();
    ref_.erase(ref_.begin());
    popped_.push_back(got);
    if (!same(got, expected)) {
      return ::testing::AssertionFailure() << "pop #" << popped_.size() << " returned "
                                           << describe(got) << ", expected " << describe(expected);
    }
    return check("pop");
  }

  ::testing::AssertionResult replace_top(const Event& e) {
    if (ref_.empty()) return ::testing::AssertionFailure() << "replace_top on an empty reference";
    const Event expected = *ref_.begin();
    const Event got = queue_.top();
    queue_.replace_top(e);
    ref_.erase(ref_.begin());
    ref_.insert(e);
    ++pushes_;
    popped_.push_back(got);
    if (!same(got, expected)) {
      return ::testing::AssertionFailure()
             << "replace_top removed " << describe(got) << ", expected " << describe(expected);
    }
    return check("replace_top with " + describe(e));
  }

  ::testing::AssertionResult drain() {
    while (!ref_.empty()) {
      if (auto r = pop(); !r) return r;
    }
    return check("drain");
  }

  const EventQueue& queue() const { return queue_; }
  const std::set<Event, Before>& ref() const { return ref_; }
  const std::vector<Event>& popped() const { return popped_; }
  std::size_t pushes() const { return pushes_; }
  Rng& rng() { return rng_; }

 private:
  ::testing::AssertionResult check(const std::string& after) const {
    if (queue_.size() != ref_.size()) {
      return ::testing::AssertionFailure()
             << "after " << after << ": size " << queue_.size() << ", expected " << ref_.size();
    }
    if (queue_.empty() != ref_.empty()) {
      return ::testing::AssertionFailure() << "after " << after << ": empty() is wrong";
    }
    if (!ref_.empty() && !same(queue_.top(), *ref_.begin())) {
      return ::testing::AssertionFailure()
             << "after " << after << ": top " << describe(queue_.top()) << ", expected "
             << describe(*ref_.begin());
    }
    return ::testing::AssertionSuccess();
  }

  Rng rng_;
  EventQueue queue_;
  std::set<Event, Before> ref_;
  std::vector<Event> popped_;
  std::uint64_t next_sequence_ = 0;
  std::size_t pushes_ = 0;
};

TEST(EventQueue, StartsEmpty) {
  EventQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_TRUE(q.sorted_ahead().empty());
}

TEST(EventQueue, SingleEvent) {
  EventQueue q;
  Event e;
  e.time = 123;
  e.tiebreak = make_tiebreak(4, 5);
  e.target = 6;
  e.tag = 7;
  e.payload = 8;
  q.push(e);
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.size(), 1u);
  EXPECT_TRUE(same(q.top(), e));
  q.pop();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  // Reusable after running dry, including at an earlier time than before.
  e.time = 5;
  q.push(e);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.top().time, 5);
  q.pop();
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, ReplaceTopOnSingleEvent) {
  EventQueue q;
  Event a;
  a.time = 10;
  a.tiebreak = make_tiebreak(0, 0);
  Event b = a;
  b.time = 10;
  b.tiebreak = make_tiebreak(0, 1);
  q.push(a);
  q.replace_top(b);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.top().tiebreak, b.tiebreak);
}

/// Pushes all of `all`, then pops everything: the order must be std::sort by before().
void push_then_pop_in_order(Checked& c, std::vector<Event> all) {
  for (const Event& e : all) ASSERT_TRUE(c.push(e));
  ASSERT_EQ(c.queue().size(), all.size());
  ASSERT_TRUE(c.drain());
  std::sort(all.begin(), all.end(), before);
  ASSERT_EQ(c.popped().size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    ASSERT_TRUE(same(c.popped()[i], all[i])) << i;
  }
  EXPECT_TRUE(c.queue().empty());
}

/// n events at random times below max_time from `sources` sources, pushed then popped.
void push_all_then_pop(std::uint64_t seed, std::size_t n, Time max_time, EntityId sources) {
  Checked c(seed);
  std::vector<Event> all;
  all.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    all.push_back(
        c.make(static_cast<Time>(c.rng().below(static_cast<std::uint64_t>(max_time))), sources));
  }
  push_then_pop_in_order(c, std::move(all));
}

TEST(EventQueue, HundredThousandEventsPopInSortedOrder) {
  push_all_then_pop(1, 100'000, 1'000'000'000, 1000);
}

TEST(EventQueue, ManyEqualTimesBrokenByTiebreak) {
  // 100k events over 10 distinct times, few sources: ties everywhere.
  push_all_then_pop(2, 100'000, 10, 4);
}

TEST(EventQueue, AllAtOneTime) { push_all_then_pop(3, 20'000, 1, 16); }

TEST(EventQueue, LockstepTimesWithSequencesPushedBackwards) {
  // A training run's shape: hundreds of events at each of a few quantized times
  // (buckets sorted by counting passes, core/bucket_sort.hpp), here with each
  // source's sequence numbers pushed in falling order, so no source's events
  // arrive in order.
  Checked c(6);
  std::vector<Event> all;
  std::uint64_t sequence = 1'000'000;
  for (int i = 0; i < 60'000; ++i) {
    Event e;
    e.time = 327'680 * static_cast<Time>(c.rng().below(40));
    e.tiebreak = make_tiebreak(static_cast<EntityId>(c.rng().below(300)), sequence--);
    e.target = static_cast<EntityId>(i);
    e.payload = static_cast<std::uint64_t>(i);
    all.push_back(e);
  }
  push_then_pop_in_order(c, std::move(all));
}

TEST(EventQueue, HoldModelWithReplaceTop) {
  // The classic calendar-queue load: pop the earliest, push it again a random
  // (exponential) time later, with a steady population.
  Checked c(4);
  for (int i = 0; i < 5'000; ++i) ASSERT_TRUE(c.push(c.make(c.rng().exponential(1'000'000))));
  for (int i = 0; i < 100'000; ++i) {
    const Time now = c.queue().top().time;
    ASSERT_TRUE(c.replace_top(c.make(now + c.rng().exponential(1'000'000)))) << i;
  }
  ASSERT_TRUE(c.drain());
  // Non-decreasing in time, as a simulation would see them.
  for (std::size_t i = 1; i < c.popped().size(); ++i) {
    ASSERT_FALSE(before(c.popped()[i], c.popped()[i - 1])) << i;
  }
}

TEST(EventQueue, BurstsAtTheCurrentTime) {
  // Each handled event sends a burst of events at the same time (delay 0) and a few
  // later: the queue must serve the burst, in tiebreak order, before moving on.
  Checked c(5);
  ASSERT_TRUE(c.push(c.make(0)));
  std::size_t handled = 0;
  while (!c.queue().empty() && handled < 100'000) {
    const Time now = c.queue().top().time;
    ASSERT_TRUE(c.pop());
    ++handled;
    if (c.queue().size() < 20'000) {
      const int burst = static_cast<int>(c.rng().below(4));
      for (int k = 0; k < burst; ++k) ASSERT_TRUE(c.push(c.make(now)));
      ASSERT_TRUE(c.push(c.make(now + 1 + static_cast<Time>(c.rng().below(1000)))));
    }
  }
  EXPECT_EQ(handled, 100'000u);
  ASSERT_TRUE(c.drain());
}

TEST(EventQueue, RandomInterleavingsMatchReference) {
  for (std::uint64_t seed = 10; seed < 16; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Checked c(seed);
    for (int op = 0; op < 40'000; ++op) {
      const Time now = c.queue().empty() ? 0 : c.queue().top().time;
      // The new event's time, relative to the current earliest one.
      Time t = now;
      switch (c.rng().below(6)) {
        case 0:  // same time: ties
          break;
        case 1:  // just after
          t = now + static_cast<Time>(c.rng().below(8));
          break;
        case 2:  // a while after
          t = now + static_cast<Time>(c.rng().below(100'000));
          break;
        case 3:  // far in the future
          t = now + static_cast<Time>(c.rng().below(1'000'000'000'000));
          break;
        case 4:  // late: before the current earliest event
          t = now - static_cast<Time>(c.rng().below(static_cast<std::uint64_t>(now) + 1));
          break;
        default:  // a fixed handful of times: many exact repeats
          t = static_cast<Time>(c.rng().below(4)) * 1'000;
          break;
      }
      const Event e = c.make(t, 8);
      const std::uint64_t action = c.rng().below(10);
      if (c.queue().empty() || action < 4) {
        ASSERT_TRUE(c.push(e)) << "op " << op;
      } else if (action < 7) {
        ASSERT_TRUE(c.pop()) << "op " << op;
      } else {
        ASSERT_TRUE(c.replace_top(e)) << "op " << op;
      }
    }
    ASSERT_TRUE(c.drain());
    EXPECT_EQ(c.popped().size(), c.pushes());
  }
}

TEST(EventQueue, LatePushesBeforeTheCurrentTop) {
  // Fill a wide range, serve part of it, then push events earlier than the top (and
  // earlier than anything served so far): they must come out first, in key order.
  Checked c(20);
  for (int i = 0; i < 10'000; ++i) {
    ASSERT_TRUE(c.push(c.make(1'000'000 + static_cast<Time>(c.rng().below(1'000'000)))));
  }
  for (int i = 0; i < 3'000; ++i) ASSERT_TRUE(c.pop());
  const Time top = c.queue().top().time;
  for (int i = 0; i < 2'000; ++i) {
    ASSERT_TRUE(c.push(c.make(static_cast<Time>(c.rng().below(static_cast<std::uint64_t>(top))))));
    ASSERT_TRUE(c.push(c.make(top)));  // exactly at the top's time
    if (i % 3 == 0) {
      ASSERT_TRUE(c.pop());
    }
  }
  ASSERT_TRUE(c.drain());
}

TEST(EventQueue, HugeAndTinyTimesRebucket) {
  // Times near 1e15 ps mixed with tiny ones, over several fill/drain cycles so that
  // the buckets are rebuilt for very different spans and densities.
  Checked c(30);
  constexpr Time kFar = 1'000'000'000'000'000;  // 1e15 ps = 1000 s
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const Time now = c.queue().empty() ? 0 : c.queue().top().time;
    for (int i = 0; i < 5'000; ++i) {
      Time t = now;
      switch (c.rng().below(4)) {
        case 0:
          t = now + static_cast<Time>(c.rng().below(10));
          break;
        case 1:
          t = now + kFar - static_cast<Time>(c.rng().below(1'000));
          break;
        case 2:
          t = now + static_cast<Time>(c.rng().below(static_cast<std::uint64_t>(kFar)));
          break;
        default:
          t = now + static_cast<Time>(c.rng().below(1'000'000));
          break;
      }
      ASSERT_TRUE(c.push(c.make(t, 16)));
    }
    // Serve most of it, pushing tiny delays after each event as a model would.
    for (int i = 0; i < 4'500; ++i) {
      const Time t = c.queue().top().time;
      if (i % 2 == 0) {
        ASSERT_TRUE(c.replace_top(c.make(t + static_cast<Time>(c.rng().below(3)), 16)));
      } else {
        ASSERT_TRUE(c.pop());
      }
    }
  }
  ASSERT_TRUE(c.drain());
}

TEST(EventQueue, SparseEventsFarApart) {
  // One event at a time, each far after the last: every pop empties the buckets.
  Checked c(40);
  Time t = 0;
  for (int i = 0; i < 2'000; ++i) {
    ASSERT_TRUE(c.push(c.make(t)));
    ASSERT_TRUE(c.push(c.make(t + 1)));
    ASSERT_TRUE(c.pop());
    t += 1 + static_cast<Time>(c.rng().below(1'000'000'000'000));
  }
  ASSERT_TRUE(c.drain());
}

TEST(EventQueue, TimesUpToNearlyInt64Max) {
  // The largest finite times a model can produce (Rng::exponential caps at 9e18).
  Checked c(50);
  constexpr Time kMax = kTimeInfinity - 1;
  for (int i = 0; i < 3'000; ++i) {
    ASSERT_TRUE(c.push(c.make(kMax - static_cast<Time>(c.rng().below(1'000)))));
    ASSERT_TRUE(c.push(c.make(static_cast<Time>(c.rng().below(1'000'000)))));
  }
  ASSERT_TRUE(c.drain());
}

TEST(EventQueue, SpanAboveTwoToThe62WithFewEvents) {
  // Two pending events 9e18 ps apart get spread over new buckets (their span needs a
  // bucket width of 2^63 when there are this few); an event pushed between them
  // afterwards must still be served before the later one.
  Checked c(60);
  ASSERT_TRUE(c.push(c.make(10)));
  ASSERT_TRUE(c.push(c.make(20)));
  ASSERT_TRUE(c.push(c.make(9'000'000'000'000'000'000)));
  ASSERT_TRUE(c.pop());  // time 10; the other two are spread now
  ASSERT_TRUE(c.push(c.make(30)));
  ASSERT_TRUE(c.pop());  // time 20
  ASSERT_TRUE(c.pop());  // must be time 30, not 9e18
  ASSERT_TRUE(c.drain());
}

TEST(EventQueue, FewFarEventsDoNotWidenTheBuckets) {
  // A training run's shape: thousands of cell events within a microsecond and a
  // few compute completions milliseconds on. The buckets take the width of the
  // dense part, not the span.
  Checked c(70);
  for (int i = 0; i < 10'000; ++i) {
    ASSERT_TRUE(c.push(c.make(static_cast<Time>(c.rng().below(1'000'000)))));
  }
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(c.push(c.make(5'000'000'000 + static_cast<Time>(c.rng().below(1'000'000)))));
  }
  ASSERT_TRUE(c.pop());  // the first pop spreads them
  // 10,000 events in 1 us, 128 a bucket: about 13 ns; far below 5 ms / 79 buckets.
  EXPECT_LE(c.queue().bucket_width(), 32'768);
  for (int i = 0; i < 20'000; ++i) {
    const Time t = c.queue().top().time;
    if (i % 2 == 0) {
      ASSERT_TRUE(c.replace_top(c.make(t + static_cast<Time>(c.rng().below(2'000'000)))));
    } else {
      ASSERT_TRUE(c.pop());
    }
  }
  ASSERT_TRUE(c.drain());
}

TEST(EventQueue, BurstAfterASparseSpreadRespreads) {
  // Spread while sparse (300 events over 10 ms: buckets milliseconds wide), then
  // bursts of events inside the bucket being served: the late heap grows past
  // its limit and every pending event is spread again, finer, still in order.
  Checked c(80);
  ASSERT_TRUE(c.push(c.make(0)));
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(c.push(c.make(5'000'000'000 + static_cast<Time>(c.rng().below(10'000'000'000)))));
  }
  ASSERT_TRUE(c.pop());  // time 0; the 300 are spread now
  EXPECT_GE(c.queue().bucket_width(), 1'000'000'000);
  for (int round = 0; round < 10; ++round) {
    const Time now = c.queue().top().time;
    for (int i = 0; i < 200; ++i) {
      ASSERT_TRUE(c.push(c.make(now + static_cast<Time>(c.rng().below(1'000'000)))));
    }
    for (int i = 0; i < 150; ++i) {
      const Time t = c.queue().top().time;
      ASSERT_TRUE(c.replace_top(c.make(t + static_cast<Time>(c.rng().below(100'000)))));
      ASSERT_TRUE(c.pop());
    }
  }
  EXPECT_GT(c.queue().respreads(), 0u);
  EXPECT_LT(c.queue().bucket_width(), 1'000'000'000);
  ASSERT_TRUE(c.drain());
}

TEST(EventQueue, InOrderPushesTrustedYetMixedByARespreadChecked) {
  // The engine's queue trusts each source to push its events of one time in
  // sequence order (make() numbers them so) and skips that check when it
  // sorts a bucket, but not for buckets laid out from events a re-spread put
  // back out of order: bursts of ties (3 sources, 4 times) into the bucket
  // being served fill the late heap, whose order is not the push order.
  for (const bool trusted : {false, true}) {
    SCOPED_TRACE(trusted ? "pushed in order" : "checked");
    Checked c(81, trusted);
    ASSERT_TRUE(c.push(c.make(0)));
    for (int i = 0; i < 300; ++i) {
      ASSERT_TRUE(c.push(c.make(5'000'000'000 + static_cast<Time>(c.rng().below(10'000'000'000)))));
    }
    ASSERT_TRUE(c.pop());  // time 0; the 300 are spread now, buckets milliseconds wide
    for (int round = 0; round < 10; ++round) {
      const Time now = c.queue().top().time;
      for (int i = 0; i < 2'000; ++i) {
        ASSERT_TRUE(c.push(c.make(now + 1'000 * static_cast<Time>(c.rng().below(4)), 3)));
      }
      for (int i = 0; i < 1'500; ++i) ASSERT_TRUE(c.pop());
    }
    EXPECT_GT(c.queue().respreads(), 0u);
    ASSERT_TRUE(c.drain());
  }
}

TEST(EventQueue, TakeBeforeHandsOverExactlyTheEarlierEvents) {
  // Atom order's use: take every event before t (in any order), then push
  // only at or after t, and again; next_time() is the earliest pending
  // throughout. Pushes land in the bucket being served, in the late heap, in
  // later buckets and in the overflow; ties are many (8 sources, few times).
  for (const bool in_order : {false, true}) {
    for (std::uint64_t seed = 40; seed < 44; ++seed) {
      SCOPED_TRACE(std::string(in_order ? "pushed in order" : "checked") + ", seed " +
                   std::to_string(seed));
      Rng rng(seed, 0);
      EventQueue queue(in_order);
      std::multiset<Event, Before> ref;
      std::uint64_t sequence = 0;
      const auto push = [&](Time time) {
        Event e;
        e.time = time;
        e.tiebreak = make_tiebreak(static_cast<EntityId>(rng.below(8)), sequence++);
        e.payload = sequence;
        queue.push(e);
        ref.insert(e);
      };
      for (int i = 0; i < 2'000; ++i) push(static_cast<Time>(rng.below(50'000)));
      Time cut = 0;  // nothing pending before it
      std::vector<Event> taken;
      for (int round = 0; round < 400 && !ref.empty(); ++round) {
        ASSERT_EQ(queue.next_time(), ref.begin()->time) << "round " << round;
        const std::uint64_t widths[] = {1, 100, 2'000, 100'000};
        cut = queue.next_time() + static_cast<Time>(rng.below(widths[rng.below(4)]) + 1);
        taken.clear();
        queue.take_before(cut, taken);
        std::vector<Event> expected(ref.begin(), ref.lower_bound(Event{cut, 0, 0, 0, 0}));
        ref.erase(ref.begin(), ref.lower_bound(Event{cut, 0, 0, 0, 0}));
        std::sort(taken.begin(), taken.end(), Before{});
        ASSERT_EQ(taken.size(), expected.size()) << "round " << round;
        for (std::size_t i = 0; i < taken.size(); ++i) {
          ASSERT_TRUE(same(taken[i], expected[i]))
              << "round " << round << ": took " << describe(taken[i]) << ", expected "
              << describe(expected[i]);
        }
        ASSERT_EQ(queue.size(), ref.size());
        // Asked before the pushes too, as a synchronization does: it may pass
        // over emptied buckets, where later pushes must not be lost.
        if (!ref.empty() && rng.below(2) == 0) {
          ASSERT_EQ(queue.next_time(), ref.begin()->time);
        }
        const int pushes = static_cast<int>(rng.below(30));
        for (int i = 0; i < pushes; ++i) {
          switch (rng.below(4)) {
            case 0:  // at the cut: ties, into the bucket being served or the heap
              push(cut + static_cast<Time>(rng.below(3)));
              break;
            case 1:
              push(cut + static_cast<Time>(rng.below(5'000)));
              break;
            case 2:
              push(cut + static_cast<Time>(rng.below(200'000)));
              break;
            default:  // far: the overflow
              push(cut + static_cast<Time>(rng.below(1'000'000'000)));
              break;
          }
        }
      }
      taken.clear();
      queue.take_before(kTimeInfinity, taken);
      EXPECT_EQ(taken.size(), ref.size());
      EXPECT_TRUE(queue.empty());
    }
  }
}

}  // namespace
}  // namespace shoal::core
