// Sorting events that are nearly in key order already: atom order's events of
// one atom in a sub-window, which the queue hands over bucket by bucket.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "shoal/core/event.hpp"

namespace shoal::core {

/// before(a, b) as one 128-bit compare, for times that are not negative (a
/// queued event's never is): among events of equal times a branch on the
/// times would mispredict.
inline bool key_before(const Event& a, const Event& b) {
  const auto key = [](const Event& e) {
    return (static_cast<unsigned __int128>(static_cast<std::uint64_t>(e.time)) << 64) | e.tiebreak;
  };
  return key(a) < key(b);
}

/// Sorts by key: an insertion sort, linear in the events and their
/// inversions; once they have moved more than 8 places per event, std::sort.
inline void sort_nearly_sorted(std::span<Event> events) {
  std::size_t moves = 0;
  const std::size_t budget = 8 * events.size();
  for (std::size_t i = 1; i < events.size(); ++i) {
    const Event e = events[i];
    std::size_t j = i;
    for (; j > 0 && key_before(e, events[j - 1]); --j) events[j] = events[j - 1];
    events[j] = e;
    moves += i - j;
    if (moves > budget) {
      std::sort(events.begin(), events.end(), key_before);
      return;
    }
  }
}

}  // namespace shoal::core
