// Sorting a bucket of the event queue without comparisons, where its events
// have few distinct times.
//
// Why: a training run's cells move in lockstep, so most buckets the event
// queue serves hold hundreds of events at one or a few times
// (docs/performance.md, seventh measurement), and std::sort's partitions
// branch on comparisons whose outcomes no predictor can guess. The key is
// (time, source entity, the source's sequence number). The sources of one
// bucket span a small range of entity ids, so stable counting passes do most
// of the work: one or two byte-wide passes on the source, then one on the
// time's rank among the bucket's few times. Events of one source only need
// their sequence numbers in order, and those mostly arrive in order already.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "shoal/core/event.hpp"
#include "shoal/core/event_buffer.hpp"

namespace shoal::core {

/// Moves the events of `bucket` into `out` (empty), latest first, in the order
/// std::sort by the event key would give reversed; `bucket` is left empty.
/// Returns false, touching nothing, where the bucket is empty, has more than 8
/// distinct times or its sources span 2^16 ids or more: std::sort is the way there.
inline bool sort_bucket(EventBuffer& bucket, EventBuffer& out) {
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

  // A stable counting pass from `from` into `to` on digit(e) < 256.
  auto pass = [n](const EventBuffer& from, EventBuffer& to, auto digit) {
    std::array<std::uint32_t, 257> at{};
    for (const Event& e : from) ++at[digit(e) + 1];
    for (std::size_t d = 1; d < at.size(); ++d) at[d] += at[d - 1];
    to.resize_for_overwrite(n);
    for (const Event& e : from) to[at[digit(e)]++] = e;
  };
  // Passes go back and forth between the bucket and out (no third buffer: a
  // bucket at the start of a training run can hold millions of events).
  EventBuffer* at = &out;
  auto next = [&] { return at == &out ? &bucket : &out; };
  pass(bucket, out, [lo](const Event& e) { return (e.source() - lo) & 0xFF; });
  if (span >= 256) {
    EventBuffer* to = next();
    pass(*at, *to, [lo](const Event& e) { return (e.source() - lo) >> 8; });
    at = to;
  }
  // Within one source, by sequence number, where not in order already.
  EventBuffer& s = *at;
  const auto by_tiebreak = [](const Event& a, const Event& b) { return a.tiebreak < b.tiebreak; };
  for (std::size_t first = 0; first < n;) {
    std::size_t last = first + 1;
    bool in_order = true;
    for (; last < n && s[last].source() == s[first].source(); ++last) {
      in_order &= s[last - 1].tiebreak < s[last].tiebreak;
    }
    if (!in_order) std::sort(s.begin() + first, s.begin() + last, by_tiebreak);
    first = last;
  }
  if (distinct > 1) {
    EventBuffer* to = next();
    pass(*at, *to, [&](const Event& e) {
      return static_cast<std::size_t>(
          std::lower_bound(times.begin(), times.begin() + distinct, e.time) - times.begin());
    });
    at = to;
  }
  if (at != &out) out.swap(bucket);
  std::reverse(out.begin(), out.end());  // served from the back: latest first
  bucket.clear();
  return true;
}

}  // namespace shoal::core
