// Sorting a bucket of the event queue without comparisons, where its events
// have few distinct times.
//
// Why: a training run's cells move in lockstep, so most buckets the event
// queue serves hold hundreds of events at one or a few times
// (docs/performance.md, seventh measurement), and std::sort's partitions
// branch on comparisons whose outcomes no predictor can guess. The key is
// (time, source entity, the source's sequence number, which a model's streams
// lead: event.hpp). The sources of one
// bucket span a small range of entity ids, so stable counting passes do most
// of the work: one pass on (time's rank, source) where that takes few values
// for the bucket's size, else one or two byte-wide passes on the source, then
// one on the time's rank among the bucket's few times. Events of one time and
// source only need their sequence numbers in order, and those mostly arrive
// in order already (a source's own stream and each of its model's streams
// arrive in order, but interleaved).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "shoal/core/event.hpp"
#include "shoal/core/event_buffer.hpp"

namespace shoal::core {

/// Moves the events of `bucket` into `out` (empty), earliest first, in the
/// order std::sort by the event key would give; `bucket` is left empty.
/// Returns false, touching nothing, where the bucket is empty, has more than 8
/// distinct times or its sources span 2^16 ids or more: std::sort is the way there.
/// `counts` is scratch, kept by the caller so that it is allocated once.
/// `pushed_in_order`: the caller knows that each source's events of one time
/// were pushed in sequence order (the event queue knows where they were not),
/// so the check for it is skipped.
inline bool sort_bucket(EventBuffer& bucket, EventBuffer& out, std::vector<std::uint32_t>& counts,
                        bool pushed_in_order = false) {
  constexpr std::size_t kMaxTimes = 8;
  const std::size_t n = bucket.size();
  if (n == 0) return false;
  std::array<Time, kMaxTimes> times{};
  std::size_t distinct = 0;
  EntityId lo = bucket[0].source();
  EntityId hi = lo;
  for (const Event& e : bucket) {
    lo = std::min(lo, e.source());
    hi = std::max(hi, e.source());
    if (distinct > 0 && e.time == times[distinct - 1]) continue;  // the common case
    if (std::find(times.begin(), times.begin() + distinct, e.time) != times.begin() + distinct) {
      continue;
    }
    if (distinct == kMaxTimes) return false;
    times[distinct++] = e.time;
  }
  const std::uint32_t span = hi - lo;
  if (span >= (1u << 16)) return false;
  for (std::size_t i = 1; i < distinct; ++i) {  // at most 8: an insertion sort
    for (std::size_t j = i; j > 0 && times[j - 1] > times[j]; --j)
      std::swap(times[j - 1], times[j]);
  }

  // Once ordered by (time, source), stably: each run of one time and source
  // by sequence number, where not in order already (a source pushes its
  // events in sequence order, so they mostly are).
  const auto by_tiebreak = [](const Event& a, const Event& b) { return a.tiebreak < b.tiebreak; };
  auto order_sequences = [n, &by_tiebreak](EventBuffer& s) {
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
  };

  // A stable counting pass from `from` into `to` on key(e) < counts.size(),
  // the counts all zero.
  auto pass = [n](const EventBuffer& from, EventBuffer& to, std::span<std::uint32_t> counts,
                  auto key) {
    for (const Event& e : from) ++counts[key(e)];
    std::uint32_t sum = 0;
    for (std::uint32_t& c : counts) sum += std::exchange(c, sum);
    to.resize_for_overwrite(n);
    for (const Event& e : from) to[counts[key(e)]++] = e;
  };
  // A time's rank among the bucket's times: how many of the later ones it has
  // reached, a count, not a search, so no branch depends on the event.
  auto time_rank = [&times, distinct](const Event& e) {
    std::size_t d = 0;
    for (std::size_t j = 1; j < distinct; ++j) d += e.time >= times[j] ? 1 : 0;
    return d;
  };

  // Where (time, source) takes few values for the bucket's size (one time
  // and a few hundred sources, as in lockstep traffic), one counting pass on
  // it does: a count per value costs less than a second pass over the events.
  const std::size_t width = std::size_t{span} + 1;
  if (distinct * width <= std::max<std::size_t>(8 * n, 256)) {
    counts.assign(distinct * width, 0);
    if (distinct == 1) {
      pass(bucket, out, counts, [lo](const Event& e) { return e.source() - lo; });
    } else {
      pass(bucket, out, counts,
           [&](const Event& e) { return time_rank(e) * width + (e.source() - lo); });
    }
    if (!pushed_in_order) order_sequences(out);
    bucket.clear();
    return true;
  }

  // Else byte-wide passes on the source, then one on the time's rank. They go
  // back and forth between the bucket and out (no third buffer: a bucket at
  // the start of a training run can hold millions of events).
  auto byte_pass = [&pass](const EventBuffer& from, EventBuffer& to, auto digit) {
    std::array<std::uint32_t, 256> zero{};
    pass(from, to, zero, digit);
  };
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
    byte_pass(*at, *to, time_rank);
    at = to;
  }
  if (at != &out) out.swap(bucket);
  if (!pushed_in_order) order_sequences(out);
  bucket.clear();
  return true;
}

}  // namespace shoal::core
