// The cost model of `shoal scale` (docs/scaling.md): what one window of an
// N-rank run costs, from the counts a one-rank run makes of it
// (window_probe.hpp). Each rank handles its events, sends its batches
// (Comm::send_events), meets the others in one reduction
// (Comm::reduce_window), then receives its batches (Comm::receive_events).
// So a window lasts as long as its busiest rank works, plus the reduction,
// plus the slowest rank's exchange.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/core/units.hpp"

namespace shoal::core {

/// What MPI costs on one kind of machine (configs/scale/*.toml).
struct MpiCosts {
  struct Point {
    int ranks = 2;
    double seconds = 0;
  };
  std::string name;
  double latency = 0;            // one-way latency of a small message, s
  double bandwidth = 1;          // point to point, bytes/s
  double message_overhead = 0;   // a rank's cost per message it sends or receives, s
  std::vector<Point> allreduce;  // small allreduce latency by ranks, ranks increasing

  /// The allreduce latency at `ranks`: 0 for one; else interpolated in
  /// log2(ranks) between the points, from (1 rank, 0) below the first and
  /// on the last segment's slope beyond the last.
  double allreduce_at(int ranks) const;
};

/// The engine's own work around MPI, on the machine that runs it
/// (`shoal mpi-costs` measures it with the engine itself).
struct EngineCosts {
  double window_seconds = 0;        // per window, beyond its reduction and events
  double remote_event_seconds = 0;  // per event a rank sends or receives, beyond its bytes
};

struct ScaleCosts {
  MpiCosts mpi;
  EngineCosts engine;
};

/// An N-rank run as the model predicts it, summed over its windows.
struct ScalePrediction {
  int parts = 1;
  Time lookahead = kTimeInfinity;
  std::int64_t windows = 0;
  /// The fewest windows any lookahead could give (WindowProbe); -1: not
  /// counted (a run in atom order).
  std::int64_t fewest_windows = 0;
  /// The busiest part's work summed over those fewest windows (as
  /// work_seconds over the lookahead's); -1: not counted.
  double fewest_work_seconds = 0;
  std::int64_t events = 0;
  std::int64_t remote_events = 0;  // events (and credits) crossing parts
  std::int64_t batches = 0;        // messages: one per window and pair of parts that exchange
  std::int64_t busiest_sum = 0;    // over windows, the most events a part handles in one
  double work_seconds = 0;         // over windows, the busiest part's work
  double mean_work_seconds = 0;    // over windows, a part's mean work
  /// The busiest part's work and waiting in an engine without windows
  /// (CausalBound): a bound, not a prediction; -1: not counted (atom order).
  double causal_work_seconds = 0;
  /// The same in an engine that knew which events reach each part, and
  /// when (CriticalPath): waiting only for those; -1: not counted.
  double critical_path_seconds = 0;
  double reduce_seconds = 0;    // the reductions
  double exchange_seconds = 0;  // over windows, the slowest part's exchange (and latency)
  std::vector<std::int64_t> part_events, part_sent, part_received;  // by part, over the run

  double loop_seconds() const { return work_seconds + reduce_seconds + exchange_seconds; }
  /// As RunSummary::balance: events / (parts x the busiest part's, window by window).
  double balance() const {
    return busiest_sum > 0 ? static_cast<double>(events) /
                                 (static_cast<double>(busiest_sum) * static_cast<double>(parts))
                           : 1.0;
  }
  /// The share of a rank's loop spent synchronizing (waiting, reducing, exchanging).
  double sync_share() const {
    const double loop = loop_seconds();
    return loop > 0 ? 1.0 - mean_work_seconds / loop : 0.0;
  }
};

}  // namespace shoal::core
