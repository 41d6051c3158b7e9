// The busiest rank's work in an engine without windows (`shoal scale`,
// docs/scaling.md, "Without windows"). Each rank handles an event at time t
// as soon as every other rank has handled its events at t - L or earlier:
// only those can send it anything that arrives by t, since every send across
// ranks takes the lookahead L at least. Messages, null messages and waiting
// cost nothing here, so the clock this keeps for each rank bounds what any
// conservative engine with this partition and this lookahead could reach,
// windows or not (null messages, say). The windowed engine's schedule is one
// such: there a rank waits, window by window, for the busiest.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "shoal/core/units.hpp"

namespace shoal::core {

class CausalBound {
 public:
  CausalBound() = default;
  CausalBound(int parts, Time lookahead)
      : lookahead_(lookahead), clocks_(static_cast<std::size_t>(parts), 0), recent_(64) {}

  /// An event at `time` on `part` that took `ticks` to handle. Events come
  /// in time order (the one-rank run's).
  void handled(Time time, std::uint16_t part, std::uint64_t ticks) {
    std::uint64_t& clock = clocks_[part];
    // One part, or parts no link joins: nothing can reach one from another.
    if (clocks_.size() == 1 || lookahead_ == kTimeInfinity) {
      clock += ticks;
      return;
    }
    settle(time - lookahead_);
    const std::uint64_t ready = best_part_ == part ? second_ : best_;
    clock = std::max(clock, ready) + ticks;
    push({time, clock, part});
  }

  /// The busiest part's clock: its work, and its waiting for what could
  /// reach it.
  std::uint64_t busiest() const {
    return clocks_.empty() ? 0 : *std::max_element(clocks_.begin(), clocks_.end());
  }

 private:
  struct Handled {
    Time time = 0;
    std::uint64_t clock = 0;  // its part's clock once it was handled
    std::uint16_t part = 0;
  };

  /// Every part's events at `up_to` or earlier now count as handled.
  void settle(Time up_to) {
    while (size_ > 0 && recent_[head_].time <= up_to) {
      const Handled& h = recent_[head_];
      raise(h.part, h.clock);
      head_ = (head_ + 1) & (recent_.size() - 1);
      --size_;
    }
  }
  /// Part `part` has handled everything up to a time a rank may wait on,
  /// by `clock`. Clocks only grow, so the two largest of different parts
  /// are kept as they change.
  void raise(std::uint16_t part, std::uint64_t clock) {
    if (part == best_part_) {
      best_ = std::max(best_, clock);
    } else if (clock > best_) {
      second_ = best_;
      best_ = clock;
      best_part_ = part;
    } else {
      second_ = std::max(second_, clock);
    }
  }
  /// A ring of the events not yet settled: those within a lookahead of the
  /// latest, in time order. It doubles when full, so it stays as large as
  /// the most events a lookahead has held.
  void push(const Handled& h) {
    if (size_ == recent_.size()) {
      std::vector<Handled> wider(recent_.size() * 2);
      for (std::size_t i = 0; i < size_; ++i) wider[i] = recent_[(head_ + i) & (size_ - 1)];
      recent_ = std::move(wider);
      head_ = 0;
    }
    recent_[(head_ + size_) & (recent_.size() - 1)] = h;
    ++size_;
  }

  Time lookahead_ = kTimeInfinity;
  std::vector<std::uint64_t> clocks_;  // by part
  std::vector<Handled> recent_;        // a power of two long
  std::size_t head_ = 0, size_ = 0;
  // Over the parts' settled clocks: the largest, whose part, and the largest
  // of the other parts.
  std::uint64_t best_ = 0, second_ = 0;
  std::uint16_t best_part_ = 0;
};

}  // namespace shoal::core
