// What a run on N ranks would do, counted window by window in a run on one
// rank (`shoal scale`, docs/scaling.md). The one-rank run is given the
// N-rank run's windows (its lookahead); the probe sees every event sent and
// handled, and counts, for each cut of the entities into parts, each part's
// events and the events that would cross parts, in batches per pair of
// parts. At the end of each window it prices the window with the cost model
// (scaling_model.hpp). Results are the same: the probe only counts.
//
// It also counts the fewest windows any conservative engine could run in:
// each opened by the first event at or after the last one's end and ended by
// the first arrival, across parts, of an event (or credit) sent inside it.
// No lookahead, however it is derived from the model's state, can widen a
// window past that arrival, so this bounds what wider windows could gain.
// And it keeps each part's clock in an engine without windows: waiting for
// what could reach it, as any conservative engine with this lookahead must
// (causal_bound.hpp), and waiting only for what does (critical_path.hpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "shoal/core/causal_bound.hpp"
#include "shoal/core/critical_path.hpp"
#include "shoal/core/event.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/scaling_model.hpp"

namespace shoal::core {

/// How an event that crosses parts travels in an N-rank run, as the model
/// that sends it knows (the network: net::Network::scale_role).
enum class CrossingRole : std::uint8_t {
  kPlain,        // one message: the event itself
  kCarryCredit,  // a cell: it, and later the credit its receiver returns over the same link
  kCredit,       // a credit: counted with its cell (a credit added early on one rank is none)
};
using CrossingRoleOf = CrossingRole (*)(std::uint32_t tag);

class WindowProbe {
 public:
  /// One cut per partition (each for its rank count), all with the same
  /// lookahead (core::lookahead), which becomes the one-rank run's window.
  WindowProbe(const Layout& layout, std::span<const Partition> cuts, CrossingRoleOf role,
              const ScaleCosts& costs);

  Time lookahead() const { return lookahead_; }

  /// The run handles its events in time order (not atom by atom), which
  /// counting the fewest windows needs; else they are not counted.
  void set_time_order(bool time_order) { time_order_ = time_order; }

  /// An event the current entity sends at `now`, for `time` (Simulator::push).
  void sent(Time now, Time time, std::uint64_t tiebreak, EntityId target, std::uint32_t tag) {
    // A credit is counted with its cell and timed by arrives().
    const bool credit = role_(tag) == CrossingRole::kCredit;
    const EntityId source = static_cast<EntityId>(tiebreak >> kSequenceBits);
    for (Cut& cut : cuts_) {
      const std::uint16_t from = cut.part_of[source];
      const std::uint16_t to = cut.part_of[target];
      if (from != to) {
        // The initial events, sent before any window, wait on nothing.
        if (time_order_ && stamp_ > 1) cut.path.sends_across(tiebreak);
        if (credit) continue;
        message(cut, from, to);
        bound_window(cut, now, time);
      }
    }
  }
  /// A credit the current entity returns at `now` to `target`, arriving at
  /// `time`, whether as an event or added early (Simulator::will_arrive).
  void arrives(EntityId source, Time now, EntityId target, Time time) {
    for (Cut& cut : cuts_) {
      if (cut.part_of[source] != cut.part_of[target]) bound_window(cut, now, time);
    }
  }
  /// An event just handled, in `ticks` (read_ticks) of this rank's time.
  void handled(const Event& ev, std::uint64_t ticks) {
    total_ticks_ += ticks;
    const bool carries_credit = role_(ev.tag) == CrossingRole::kCarryCredit;
    for (Cut& cut : cuts_) {
      const std::uint16_t part = cut.part_of[ev.target];
      open_window(cut, ev.time);
      touch(cut, part);
      ++cut.events[part];
      cut.ticks[part] += ticks;
      cut.fewest_ticks[part] += ticks;
      const std::uint16_t from = cut.part_of[ev.source()];
      if (time_order_) {
        cut.causal.handled(ev.time, part, ticks);
        cut.path.handled(ev.tiebreak, part, from != part, ticks);
      }
      // The receiver returns the cell's credit upstream: one message back.
      if (from != part && carries_credit) message(cut, part, from);
    }
  }
  /// After each synchronization: prices the window just ended (the first
  /// call, before any window, the initial events' exchange).
  void end_window();

  /// Per cut, in the order given. `loop_seconds`: the one-rank run's loop,
  /// which the probe's ticks of handling are scaled to (its own are slower).
  std::vector<ScalePrediction> predictions(double loop_seconds) const;

  /// A time stamp for handled(): the CPU's cycle counter where there is one.
  static std::uint64_t read_ticks() {
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
  }

 private:
  struct Cut {
    int parts = 1;
    std::vector<std::uint16_t> part_of;                                         // by entity
    std::vector<std::int64_t> events, sent, received, batches_out, batches_in;  // this window
    std::vector<std::uint64_t> ticks;                                           // this window
    double busiest_ticks = 0;                // over windows, the busiest part's ticks
    std::vector<std::uint32_t> batch_stamp;  // [from * parts + to]
    std::vector<std::uint8_t> active;        // by part: in `touched`
    std::vector<std::uint16_t> touched;      // parts with events or messages this window
    ScalePrediction total;
    Time fewest_end = -1;  // the end of the fewest windows' current one; none open yet
    std::vector<std::uint64_t> fewest_ticks;  // by part, in the fewest windows' current one
    double fewest_busiest_ticks = 0;          // over those before it, the busiest part's ticks
    CausalBound causal;
    CriticalPath path;
  };
  static void touch(Cut& cut, std::uint16_t part) {
    if (cut.active[part] == 0) {
      cut.active[part] = 1;
      cut.touched.push_back(part);
    }
  }
  void message(Cut& cut, std::uint16_t from, std::uint16_t to) {
    touch(cut, from);
    touch(cut, to);
    ++cut.sent[from];
    ++cut.received[to];
    std::uint32_t& stamp = cut.batch_stamp[static_cast<std::size_t>(from) * cut.parts + to];
    if (stamp != stamp_) {
      stamp = stamp_;
      ++cut.batches_out[from];
      ++cut.batches_in[to];
    }
  }
  void price(Cut& cut);
  /// The fewest windows: an event at `now` at or past the current one's end
  /// opens the next, which then ends no later than what crosses parts in it.
  /// Events sent before the first window (the initial ones) bound none.
  void open_window(Cut& cut, Time now) {
    if (now >= cut.fewest_end && stamp_ > 1) {
      ++cut.total.fewest_windows;
      cut.fewest_end = kTimeInfinity;
      close_fewest(cut);
    }
  }
  /// The fewest windows' current one ends: its busiest part's work counts.
  static void close_fewest(Cut& cut) {
    cut.fewest_busiest_ticks +=
        static_cast<double>(*std::max_element(cut.fewest_ticks.begin(), cut.fewest_ticks.end()));
    std::fill(cut.fewest_ticks.begin(), cut.fewest_ticks.end(), 0);
  }
  void bound_window(Cut& cut, Time now, Time arrival) {
    if (stamp_ == 1) return;
    open_window(cut, now);
    cut.fewest_end = std::min(cut.fewest_end, arrival);
  }

  std::vector<Cut> cuts_;
  CrossingRoleOf role_;
  ScaleCosts costs_;
  Time lookahead_ = kTimeInfinity;
  std::uint64_t total_ticks_ = 0;
  std::uint32_t stamp_ = 1;  // the window's number, from 1: batch_stamp starts at 0
  bool time_order_ = true;
};

}  // namespace shoal::core
