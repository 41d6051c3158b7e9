// The busiest rank's work in an engine that knew in advance which events
// would reach each rank, and when (`shoal scale`, docs/scaling.md, "Without
// windows"): each rank handles its events in time order, and one that comes
// from another rank no sooner than the event that sent it was handled there.
// No engine, conservative or optimistic, could beat this with the partition:
// it leaves out only the credits a rank adds early, without an event.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace shoal::core {

class CriticalPath {
 public:
  CriticalPath() = default;
  explicit CriticalPath(int parts) : clocks_(static_cast<std::size_t>(parts), 0) {
    sent_.reserve(1024);
  }

  /// The event being handled sends the event keyed `tiebreak` to another part.
  void sends_across(std::uint64_t tiebreak) { sending_.push_back(tiebreak); }

  /// The event keyed `tiebreak` was handled on `part` in `ticks`; `across`:
  /// another part sent it.
  void handled(std::uint64_t tiebreak, std::uint16_t part, bool across, std::uint64_t ticks) {
    std::uint64_t& clock = clocks_[part];
    if (across) {
      const auto it = sent_.find(tiebreak);
      if (it != sent_.end()) {
        clock = std::max(clock, it->second);
        sent_.erase(it);
      }
    }
    clock += ticks;
    for (const std::uint64_t sent : sending_) sent_.emplace(sent, clock);
    sending_.clear();
  }

  /// The busiest part's clock.
  std::uint64_t busiest() const {
    return clocks_.empty() ? 0 : *std::max_element(clocks_.begin(), clocks_.end());
  }

 private:
  std::vector<std::uint64_t> clocks_;  // by part
  // The events in flight across parts: when the event that sent each was handled.
  std::unordered_map<std::uint64_t, std::uint64_t> sent_;
  std::vector<std::uint64_t> sending_;  // sent across by the event being handled
};

}  // namespace shoal::core
