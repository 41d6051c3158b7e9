// Sorting events that are nearly in key order already: atom order's events of
// one atom in a sub-window, which the queue hands over bucket by bucket.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "shoal/core/event.hpp"

namespace shoal::core {

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
