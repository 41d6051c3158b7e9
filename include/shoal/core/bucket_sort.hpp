// Sorting a bucket of the event queue without comparisons, where its events
// have few distinct times.
//
// Why: a training run's cells move in lockstep, so most buckets the event
// queue serves hold hundreds of events at one or a few times, and
// std::sort's partitions
// branch on comparisons whose outcomes no predictor can guess. The key is
// (time, source entity, the source's sequence number, which a model's streams
// lead: event.hpp). A bucket's times are replaced by their ranks among the
// bucket's distinct times (at most 256; a table lookup where the time changes
// from one event to the next, the last pass writing the times back), and the
// sources of one bucket span a small range of entity ids, so stable counting
// passes do the rest: one pass on (time's rank, source) where that takes few
// values for the bucket's size, else one or two byte-wide passes on the
// source, then one on the time's rank. Events of one time and source only
// need their sequence numbers in order, and those mostly arrive in order
// already (a source's own stream and each of its model's streams arrive in
// order, but interleaved).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "shoal/core/event.hpp"
#include "shoal/core/event_buffer.hpp"

namespace shoal::core {

/// Sorts buckets; holds the scratch (counts, a table from a time to its rank)
/// so that it is allocated once.
class BucketSorter {
 public:
  /// The most distinct times a bucket may have: a time's rank takes one
  /// byte-wide counting pass. Buckets with more are sorted another way.
  static constexpr std::size_t kMaxTimes = 256;

  BucketSorter() { slot_time_.fill(kFree); }

  /// Moves the events of `bucket` into `out` (empty), earliest first, in the
  /// order std::sort by the event key would give; `bucket` is left empty.
  /// Returns false, touching nothing, where the bucket is empty, has more than
  /// kMaxTimes distinct times, holds the time kFree, or its sources span 2^16
  /// ids or more: std::sort is the way there.
  /// `pushed_in_order`: the caller knows that each source's events of one
  /// time were pushed in sequence order (the event queue knows where they
  /// were not), so the check for it is skipped.
  bool sort(EventBuffer& bucket, EventBuffer& out, bool pushed_in_order = false) {
    const std::size_t n = bucket.size();
    if (n == 0) return false;
    EntityId lo = bucket[0].source();
    EntityId hi = lo;
    std::size_t distinct = 0;
    Time last = bucket[0].time;
    bool fits = add_time(last, distinct);
    for (const Event& e : bucket) {
      lo = std::min(lo, e.source());
      hi = std::max(hi, e.source());
      if (e.time == last) continue;  // the common case
      last = e.time;
      fits = fits && add_time(last, distinct);
    }
    const std::uint32_t span = hi - lo;
    if (!fits || span >= (1u << 16)) {
      forget_times(distinct);
      return false;
    }

    // Each time replaced by its rank, so the passes below take it as a small
    // key; the last pass writes the times back.
    if (distinct > 1) {
      // The slots taken, by their times (forget_times needs them in no order).
      std::sort(slot_of_.begin(), slot_of_.begin() + static_cast<std::ptrdiff_t>(distinct),
                [this](std::uint16_t a, std::uint16_t b) { return slot_time_[a] < slot_time_[b]; });
      for (std::size_t r = 0; r < distinct; ++r) {
        slot_rank_[slot_of_[r]] = static_cast<std::uint8_t>(r);
        times_[r] = slot_time_[slot_of_[r]];
      }
      // Runs of one time are the common case: a lookup only where it changes.
      Time at_time = bucket[0].time;
      Time rank = slot_rank_[slot_holding(at_time)];
      for (Event& e : bucket) {
        if (e.time != at_time) {
          at_time = e.time;
          rank = slot_rank_[slot_holding(at_time)];
        }
        e.time = rank;
      }
    }
    // The last pass writes each event with its time back in place of the rank.
    const auto with_time = [this](Event e) {
      e.time = times_[static_cast<std::size_t>(e.time)];
      return e;
    };

    const std::size_t width = std::size_t{span} + 1;
    if (distinct * width <= std::max<std::size_t>(8 * n, 256)) {
      // (time, source) takes few values for the bucket's size (one time and a
      // few hundred sources, as in lockstep traffic): one counting pass on it
      // does, a count per value costing less than a second pass over the events.
      counts_.assign(distinct * width, 0);
      if (distinct == 1) {
        pass(bucket, out, counts_, [lo](const Event& e) { return e.source() - lo; });
      } else {
        pass(
            bucket, out, counts_,
            [lo, width](const Event& e) {
              return static_cast<std::size_t>(e.time) * width + (e.source() - lo);
            },
            with_time);
      }
    } else {
      // Else byte-wide passes on the source, then one on the time's rank. They
      // go back and forth between the bucket and out (no third buffer: a
      // bucket at the start of a training run can hold millions of events).
      EventBuffer* at = &out;
      auto next = [&] { return at == &out ? &bucket : &out; };
      byte_pass(bucket, out, [lo](const Event& e) { return (e.source() - lo) & 0xFF; });
      if (span >= 256) {
        EventBuffer* to = next();
        byte_pass(*at, *to, [lo](const Event& e) { return (e.source() - lo) >> 8; });
        at = to;
      }
      if (distinct > 1) {
        EventBuffer* to = next();
        byte_pass(
            *at, *to, [](const Event& e) { return static_cast<std::size_t>(e.time); }, with_time);
        at = to;
      }
      if (at != &out) out.swap(bucket);
    }
    if (!pushed_in_order) order_sequences(out);
    forget_times(distinct);
    bucket.clear();
    return true;
  }

 private:
  // The table from a time to its rank: open addressing, at most half full.
  // Queued times are never negative, so the least Time marks a free slot.
  static constexpr Time kFree = std::numeric_limits<Time>::min();
  static constexpr std::size_t kSlots = 2 * kMaxTimes;
  static constexpr int kSlotBits = 9;
  static_assert(std::size_t{1} << kSlotBits == kSlots);

  static std::size_t home_of(Time t) {  // Fibonacci hashing: nearby times spread
    return static_cast<std::size_t>((static_cast<std::uint64_t>(t) * 0x9E3779B97F4A7C15ull) >>
                                    (64 - kSlotBits));
  }
  std::size_t slot_holding(Time t) const {  // t is in the table
    std::size_t s = home_of(t);
    while (slot_time_[s] != t) s = (s + 1) & (kSlots - 1);
    return s;
  }
  /// Puts t in the table if it is not there; false where it cannot be.
  bool add_time(Time t, std::size_t& distinct) {
    if (t == kFree) return false;
    std::size_t s = home_of(t);
    for (; slot_time_[s] != kFree; s = (s + 1) & (kSlots - 1)) {
      if (slot_time_[s] == t) return true;
    }
    if (distinct == kMaxTimes) return false;
    slot_time_[s] = t;
    slot_of_[distinct++] = static_cast<std::uint16_t>(s);
    return true;
  }
  void forget_times(std::size_t distinct) {
    for (std::size_t i = 0; i < distinct; ++i) slot_time_[slot_of_[i]] = kFree;
  }

  /// A stable counting pass from `from` into `to` on key(e) < counts.size(),
  /// the counts all zero; `to` takes emit(e) for each event e.
  template <typename Key, typename Emit = std::identity>
  static void pass(const EventBuffer& from, EventBuffer& to, std::span<std::uint32_t> counts,
                   Key key, Emit emit = {}) {
    for (const Event& e : from) ++counts[key(e)];
    std::uint32_t sum = 0;
    for (std::uint32_t& c : counts) sum += std::exchange(c, sum);
    to.resize_for_overwrite(from.size());
    for (const Event& e : from) to[counts[key(e)]++] = emit(e);
  }
  template <typename Digit, typename Emit = std::identity>
  static void byte_pass(const EventBuffer& from, EventBuffer& to, Digit digit, Emit emit = {}) {
    std::array<std::uint32_t, 256> zero{};
    pass(from, to, zero, digit, emit);
  }

  /// Once ordered by (time, source), stably: each run of one time and source
  /// by sequence number, where not in order already (a source pushes its
  /// events in sequence order, so they mostly are).
  static void order_sequences(EventBuffer& s) {
    const auto by_tiebreak = [](const Event& a, const Event& b) { return a.tiebreak < b.tiebreak; };
    const std::size_t n = s.size();
    // Out of order somewhere only if two neighbours of one time have falling
    // keys (of one time, a smaller key after a larger one is the same source:
    // sources rise): one compare per event finds that it is not, the common case.
    std::size_t at = 1;
    while (at < n && !(s[at].tiebreak < s[at - 1].tiebreak && s[at].time == s[at - 1].time)) ++at;
    if (at >= n) return;
    for (std::size_t first = 0; first < n;) {
      std::size_t last = first + 1;
      bool in_order = true;
      for (; last < n && s[last].source() == s[first].source() && s[last].time == s[first].time;
           ++last) {
        in_order &= s[last - 1].tiebreak < s[last].tiebreak;
      }
      if (!in_order) std::sort(s.begin() + first, s.begin() + last, by_tiebreak);
      first = last;
    }
  }

  std::array<Time, kSlots> slot_time_;              // kFree where the slot is free
  std::array<std::uint8_t, kSlots> slot_rank_{};    // the rank of the time in the slot
  std::array<std::uint16_t, kMaxTimes> slot_of_{};  // the slots taken
  std::array<Time, kMaxTimes> times_{};             // the distinct times, earliest first
  std::vector<std::uint32_t> counts_;
};

}  // namespace shoal::core
