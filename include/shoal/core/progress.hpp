// The progress line of long runs: rank 0 prints simulated time, event rate and,
// when an end time is set, the ETA, at most once per interval.
#pragma once

#include <chrono>
#include <cstdint>

#include "shoal/core/units.hpp"

namespace shoal::core {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  Progress() = default;
  Progress(bool enabled, double interval_seconds, Time end_time);

  /// Cheap when nothing is due: one clock read.
  void update(Time simulated, std::int64_t events) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (now < next_report_) return;
    report(now, simulated, events);
  }

 private:
  void report(Clock::time_point now, Time simulated, std::int64_t events);

  bool enabled_ = false;
  Clock::duration interval_{};
  Time end_time_ = kTimeInfinity;
  Clock::time_point start_{};
  Clock::time_point next_report_{};
  Clock::time_point last_report_{};
  std::int64_t last_events_ = 0;
};

}  // namespace shoal::core
