#include "shoal/core/window_probe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "shoal/core/error.hpp"

namespace shoal::core {

double MpiCosts::allreduce_at(int ranks) const {
  if (ranks <= 1 || allreduce.empty()) return 0;
  const double x = std::log2(static_cast<double>(ranks));
  // The segment that holds x, or the last one; below the first point, from (1, 0).
  double x0 = 0, y0 = 0;
  double x1 = std::log2(static_cast<double>(allreduce.front().ranks));
  double y1 = allreduce.front().seconds;
  for (std::size_t i = 1; i < allreduce.size() && x > x1; ++i) {
    x0 = x1;
    y0 = y1;
    x1 = std::log2(static_cast<double>(allreduce[i].ranks));
    y1 = allreduce[i].seconds;
  }
  if (x1 <= x0) return y1;
  return std::max(0.0, y0 + (y1 - y0) * (x - x0) / (x1 - x0));
}

WindowProbe::WindowProbe(const Layout& layout, std::span<const Partition> cuts, CrossingRoleOf role,
                         const ScaleCosts& costs)
    : role_(role), costs_(costs) {
  if (cuts.empty()) throw Error("internal: a window probe without a partition");
  for (const Partition& partition : cuts) {
    if (partition.ranks() > std::numeric_limits<std::uint16_t>::max()) {
      throw Error("at most 65535 ranks can be predicted");
    }
    const Time l = core::lookahead(layout, partition);
    if (lookahead_ != kTimeInfinity && l != lookahead_) {
      throw Error("internal: a window probe's partitions have different lookaheads");
    }
    lookahead_ = l;
    Cut cut;
    cut.parts = partition.ranks();
    const std::vector<std::int32_t> ranks = partition.entity_ranks(layout);
    cut.part_of.assign(ranks.begin(), ranks.end());
    const auto parts = static_cast<std::size_t>(cut.parts);
    for (auto* v : {&cut.events, &cut.sent, &cut.received, &cut.batches_out, &cut.batches_in}) {
      v->assign(parts, 0);
    }
    cut.ticks.assign(parts, 0);
    cut.fewest_ticks.assign(parts, 0);
    cut.active.assign(parts, 0);
    cut.batch_stamp.assign(parts * parts, 0);
    cut.total.parts = cut.parts;
    cut.total.lookahead = l;
    cut.total.part_events.assign(parts, 0);
    cut.total.part_sent.assign(parts, 0);
    cut.total.part_received.assign(parts, 0);
    cut.causal = CausalBound(cut.parts, l);
    cut.path = CriticalPath(cut.parts);
    cuts_.push_back(std::move(cut));
  }
}

void WindowProbe::end_window() {
  for (Cut& cut : cuts_) price(cut);
  ++stamp_;
}

void WindowProbe::price(Cut& cut) {
  ScalePrediction& t = cut.total;
  if (stamp_ > 1) ++t.windows;  // the first call prices the exchange before any window
  const MpiCosts& mpi = costs_.mpi;
  std::uint64_t busiest_ticks = 0;
  double slowest_exchange = 0;
  std::int64_t events = 0, busiest = 0, batches = 0;
  for (const std::uint16_t p : cut.touched) {
    events += cut.events[p];
    busiest = std::max(busiest, cut.events[p]);
    batches += cut.batches_out[p];
    busiest_ticks = std::max(busiest_ticks, cut.ticks[p]);
    const double exchange =
        static_cast<double>(cut.batches_out[p] + cut.batches_in[p]) * mpi.message_overhead +
        static_cast<double>(cut.sent[p] + cut.received[p]) *
            (static_cast<double>(sizeof(Event)) / mpi.bandwidth +
             costs_.engine.remote_event_seconds);
    slowest_exchange = std::max(slowest_exchange, exchange);
    t.part_events[p] += cut.events[p];
    t.part_sent[p] += cut.sent[p];
    t.part_received[p] += cut.received[p];
    t.remote_events += cut.sent[p];
    cut.events[p] = cut.sent[p] = cut.received[p] = cut.batches_out[p] = cut.batches_in[p] = 0;
    cut.ticks[p] = 0;
    cut.active[p] = 0;
  }
  cut.touched.clear();
  t.events += events;
  t.busiest_sum += busiest;
  t.batches += batches;
  cut.busiest_ticks += static_cast<double>(busiest_ticks);
  if (cut.parts > 1) {
    const double allreduce = mpi.allreduce_at(cut.parts);
    t.reduce_seconds += allreduce + costs_.engine.window_seconds;
    // The batches are sent before the reduction (Comm::send_events): the
    // last arrives a message's latency after it was sent, which the
    // reduction mostly hides.
    t.exchange_seconds +=
        slowest_exchange + (batches > 0 ? std::max(0.0, mpi.latency - allreduce) : 0.0);
  }
}

std::vector<ScalePrediction> WindowProbe::predictions(double loop_seconds) const {
  // A part's work is its events' share of the one-rank loop, by the time
  // each took to handle here: events differ in cost (a cell at a switch, a
  // credit), and a window's busiest part is the one with the most of it.
  const double seconds_per_tick =
      total_ticks_ > 0 ? loop_seconds / static_cast<double>(total_ticks_) : 0.0;
  std::vector<ScalePrediction> out;
  out.reserve(cuts_.size());
  for (const Cut& cut : cuts_) {
    ScalePrediction p = cut.total;
    if (!time_order_) p.fewest_windows = -1;
    // The last of the fewest windows is still open.
    const double fewest_ticks =
        cut.fewest_busiest_ticks +
        static_cast<double>(*std::max_element(cut.fewest_ticks.begin(), cut.fewest_ticks.end()));
    p.fewest_work_seconds = time_order_ ? fewest_ticks * seconds_per_tick : -1.0;
    p.work_seconds = cut.busiest_ticks * seconds_per_tick;
    p.causal_work_seconds =
        time_order_ ? static_cast<double>(cut.causal.busiest()) * seconds_per_tick : -1.0;
    p.critical_path_seconds =
        time_order_ ? static_cast<double>(cut.path.busiest()) * seconds_per_tick : -1.0;
    p.mean_work_seconds = loop_seconds / static_cast<double>(cut.parts);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace shoal::core
