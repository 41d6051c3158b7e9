#include "shoal/core/progress.hpp"

#include <spdlog/spdlog.h>

namespace shoal::core {

Progress::Progress(bool enabled, double interval_seconds, Time end_time)
    : enabled_(enabled && interval_seconds > 0),
      interval_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(interval_seconds > 0 ? interval_seconds : 1.0))),
      end_time_(end_time),
      start_(Clock::now()),
      next_report_(start_ + interval_),
      last_report_(start_) {}

void Progress::report(Clock::time_point now, Time simulated, std::int64_t events) {
  const double since_last = std::chrono::duration<double>(now - last_report_).count();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = since_last > 0 ? static_cast<double>(events - last_events_) / since_last : 0;
  if (end_time_ != kTimeInfinity && simulated > 0) {
    const double done = static_cast<double>(simulated) / static_cast<double>(end_time_);
    const double eta = done > 0 ? elapsed * (1.0 - done) / done : 0.0;
    spdlog::info(
        "progress: simulated {} of {} ({:.1f}%), {} events, {:.3g} M events/s, ETA {:.0f} s",
        format_time(simulated), format_time(end_time_), 100.0 * done, events, rate / 1e6, eta);
  } else {
    spdlog::info("progress: simulated {}, {} events, {:.3g} M events/s, {:.0f} s elapsed",
                 format_time(simulated), events, rate / 1e6, elapsed);
  }
  last_report_ = now;
  last_events_ = events;
  next_report_ = now + interval_;
}

}  // namespace shoal::core
