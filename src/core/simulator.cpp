#include "shoal/core/simulator.hpp"

#include "shoal/core/stop_signal.hpp"

#include <algorithm>

#include "shoal/core/error.hpp"
#include "shoal/core/nearly_sorted.hpp"

namespace shoal::core {

Simulator::Simulator(const Comm& comm, const Layout& layout, const Partition& partition,
                     const EngineOptions& options)
    : comm_(comm),
      layout_(layout),
      partition_name_(partition.description()),
      entity_count_(layout.entity_count()),
      rank_(comm.rank()),
      single_rank_(comm.size() == 1),
      cores_(layout.entity_count()),
      lookahead_(core::lookahead(layout, partition)),
      end_time_(options.end_time),
      outboxes_(static_cast<std::size_t>(comm.size())),
      sent_to_(static_cast<std::size_t>(comm.size())),
      progress_(options.progress && comm.rank() == 0, options.progress_interval_seconds,
                options.end_time) {
  if (partition.ranks() != comm.size()) {
    throw Error("partition '" + partition.description() + "' is for " +
                std::to_string(partition.ranks()) + " ranks, but the run has " +
                std::to_string(comm.size()));
  }
  if (options.end_time <= 0) throw Error("end time must be positive");
  if (comm.size() > 65535) throw Error("at most 65535 ranks are supported");
  if (options.order == EventOrder::kAtom) {
    for (const AtomLink& link : layout.links()) {
      if (link.from != link.to) atom_lookahead_ = std::min(atom_lookahead_, link.latency);
    }
    // No link between atoms, or one without latency: nothing to order by atom.
    atom_order_ = atom_lookahead_ > 0 && atom_lookahead_ != kTimeInfinity;
  }
  if (atom_order_) {
    atom_count_ = layout.atom_count();
    atom_of_.resize(entity_count_);
    for (AtomId a = 0; a < atom_count_; ++a) {
      std::fill(atom_of_.begin() + layout.atom_begin(a), atom_of_.begin() + layout.atom_end(a), a);
    }
    atom_counts_.assign(atom_count_, 0);
    atom_first_.assign(atom_count_, 0);
    atom_unsorted_.assign(atom_count_, 0);
  }
  const std::vector<std::int32_t> ranks = partition.entity_ranks(layout);
  entity_rank_.assign(ranks.begin(), ranks.end());
  for (EntityId e = 0; e < entity_count_; ++e) {
    if (owns(e)) cores_.construct(e).rng = Rng(options.seed, e);
  }
}

void Simulator::schedule_initial(EntityId source, EntityId target, Time time, std::uint32_t tag,
                                 std::uint64_t payload) {
  if (source >= entity_count_ || !owns(source)) {
    throw Error("initial event from entity " + std::to_string(source) +
                ", which this rank does not own");
  }
  if (target >= entity_count_ || time < 0) reject_send(source, target, time);
  enqueue(source, target, time, tag, payload);
}

Time Simulator::synchronize() {
  const std::int64_t stop = stop_requested() ? 1 : 0;
  inbox_.clear();
  if (comm_.size() == 1) {
    global_events_ = events_;
    events_at_sync_ = events_;
    stopped_ = stop != 0;
    return queue_.empty() ? kTimeInfinity : queue_.next_time();
  }
  // The earliest event anywhere is the earliest of every rank's queue and of
  // what it sends. Batches travel only where there are events to send: in
  // most windows of a training run a rank has none for most ranks.
  const Time local_next = queue_.empty() ? kTimeInfinity : queue_.next_time();
  for (std::size_t r = 0; r < outboxes_.size(); ++r) sent_to_[r] = outboxes_[r].empty() ? 0 : 1;
  std::int64_t expected = 0;
  // The batches go first and travel while the reduction runs.
  comm_.send_events(outboxes_, exchanges_);
  const WindowState all = comm_.reduce_window({std::min(local_next, next_outgoing_), events_, stop,
                                               events_ - events_at_sync_, window_work_ns_},
                                              sent_to_, expected);
  busiest_sum_ += all.busiest;
  waited_ns_ += all.slowest_work - window_work_ns_;
  comm_.receive_events(expected, exchanges_, inbox_);  // run() queues them
  ++exchanges_;
  for (auto& box : outboxes_) box.clear();
  next_outgoing_ = kTimeInfinity;
  stopped_ = stopped_ || all.stop != 0;  // any rank asked: all stop after this window
  global_events_ = all.events;
  events_at_sync_ = events_;
  return all.next_time;
}

void Simulator::probe_send(Time time, std::uint64_t tiebreak, EntityId target,
                           std::uint32_t tag) const {
  probe_->sent(now_, time, tiebreak, target, tag);
}

void Simulator::probe_arrival(EntityId target, Time time) const {
  probe_->arrives(current_, now_, target, time);
}

void Simulator::attach_probe(WindowProbe& probe) {
  if (comm_.size() != 1 || events_ > 0 || windows_ > 0) {
    throw Error("internal: a window probe is attached to a one-rank run before it starts");
  }
  lookahead_ = probe.lookahead();
  probe_ = &probe;
  probe.set_time_order(!atom_order_);
}

void Simulator::gather_by_atom() {
  gathered_.clear();
  queue_.take_before(sub_end_, gathered_);
  // Grouped by atom, each atom's in key order. The queue hands its buckets
  // over in time order but each in push order, and a bucket holds about 128
  // events of all atoms, so an atom's events arrive nearly sorted: grouped by
  // counting, in arrival order, then sorted only where one came before its
  // predecessor. Where the sub-window holds too few events to pay for a
  // pass over the atoms, a sort on (atom, key) instead.
  const std::size_t n = gathered_.size();
  if (n * 4 >= atom_count_) {
    for (const Event& e : gathered_) ++atom_counts_[atom_of_[e.target]];
    std::uint32_t sum = 0;
    for (std::size_t a = 0; a < atom_count_; ++a) {
      const std::uint32_t count = atom_counts_[a];
      atom_counts_[a] = sum;
      atom_first_[a] = sum;
      sum += count;
    }
    by_atom_.resize(n);
    unsorted_atoms_.clear();
    for (const Event& e : gathered_) {
      const AtomId atom = atom_of_[e.target];
      const std::uint32_t at = atom_counts_[atom]++;
      if (at != atom_first_[atom] && key_before(e, by_atom_[at - 1]) && !atom_unsorted_[atom]) {
        atom_unsorted_[atom] = 1;
        unsorted_atoms_.push_back(atom);
      }
      by_atom_[at] = e;
    }
    for (const AtomId atom : unsorted_atoms_) {
      atom_unsorted_[atom] = 0;
      const std::uint32_t first = atom_first_[atom];
      sort_nearly_sorted(std::span<Event>(by_atom_).subspan(first, atom_counts_[atom] - first));
    }
    std::fill(atom_counts_.begin(), atom_counts_.end(), 0);
    return;
  }
  std::sort(gathered_.begin(), gathered_.end(), [this](const Event& a, const Event& b) {
    const AtomId x = atom_of_[a.target];
    const AtomId y = atom_of_[b.target];
    return x != y ? x < y : before(a, b);
  });
  by_atom_.swap(gathered_);
}

RunSummary Simulator::summarize(double wall_seconds, double sync_seconds,
                                double work_seconds) const {
  RunSummary s;
  s.ranks = comm_.size();
  s.partition = partition_name_;
  s.lookahead = lookahead_;
  s.sub_window = atom_order_ ? atom_lookahead_ : 0;
  s.events = comm_.sum(events_);
  s.remote_events = comm_.sum(remote_sent_);
  s.windows = windows_;
  // Every rank had the same sum: the busiest rank's events, window by window.
  s.balance = busiest_sum_ > 0 ? static_cast<double>(s.events) /
                                     (static_cast<double>(busiest_sum_) * comm_.size())
                               : 1.0;
  s.wall_seconds = comm_.max(wall_seconds);
  const double loop = sync_seconds + work_seconds;
  const double share = loop > 0 ? sync_seconds / loop : 0.0;
  s.sync_share_mean = comm_.sum(share) / comm_.size();
  s.sync_share_max = comm_.max(share);
  const double waited = static_cast<double>(waited_ns_) * 1e-9;
  s.wait_share_mean =
      comm_.sum(sync_seconds > 0 ? std::min(1.0, waited / sync_seconds) : 0.0) / comm_.size();
  // The run reached its end time if events were still pending there, on any rank.
  const bool reached_end = end_time_ != kTimeInfinity &&
                           comm_.max(std::int64_t{reached_end_time_ || events_beyond_end_}) != 0;
  s.simulated_time = reached_end ? end_time_ : comm_.max(last_event_time_);
  s.stopped = stopped_;
  return s;
}

void Simulator::send_note(EntityId target, Time delay, std::uint32_t tag, std::uint64_t payload) {
  if (delay < 0 || target >= entity_count_) reject_send(current_, target, delay);
  const int owner = rank_of(target);
  if (owner == rank_) {
    throw Error("internal: a note to entity " + std::to_string(target) + ", on its own rank");
  }
  const Time time = saturating_add(now_, delay);
  if (time >= end_time_) return;  // as its event: never handled
  // The key of the event being handled: a note is never ordered, so any key does.
  const Event note{time, current_tiebreak_, target, tag, payload};
  if (time < window_end_) reject_lookahead(note);
  outboxes_[static_cast<std::size_t>(owner)].push_back(note);
}

void Simulator::reject_send(EntityId source, EntityId target, Time delay) const {
  if (target >= entity_count_) {
    throw Error("entity " + std::to_string(source) + " sent an event to entity " +
                std::to_string(target) + ", which does not exist (" +
                std::to_string(entity_count_) + " entities)");
  }
  throw Error("entity " + std::to_string(source) + " scheduled an event in the past (delay " +
              std::to_string(delay) + " ps)");
}

void Simulator::reject_sequence(EntityId source) const {
  throw Error("entity " + std::to_string(source) + " sent more than 2^" +
              std::to_string(kStreamShift) + " events; the event key cannot order more");
}

void Simulator::reject_stream(std::uint32_t stream, std::uint64_t sequence) const {
  throw Error("internal: entity " + std::to_string(current_) + " sent event " +
              std::to_string(sequence) + " of stream " + std::to_string(stream) +
              "; a model's streams are 1 to " + std::to_string(kStreams - 1) +
              ", numbered below 2^" + std::to_string(kStreamShift));
}

void Simulator::reject_act_as(EntityId e) const {
  throw Error("internal: set-up for entity " + std::to_string(e) +
              ", which this rank does not own");
}

void Simulator::reject_atom_lookahead(const Event& ev) const {
  throw Error("internal: entity " + std::to_string(ev.source()) + " sent an event to entity " +
              std::to_string(ev.target) + " of another atom at " + format_time(ev.time) +
              ", inside the sub-window ending at " + format_time(sub_end_) +
              " (its latency to it is below the atoms' lookahead of " +
              format_time(atom_lookahead_) + ")");
}

void Simulator::reject_lookahead(const Event& ev) const {
  throw Error("entity " + std::to_string(ev.source()) + " sent an event to entity " +
              std::to_string(ev.target) + " on rank " + std::to_string(entity_rank_[ev.target]) +
              " at " + format_time(ev.time) + ", inside the lookahead window ending at " +
              format_time(window_end_) + " (the model's latency to it is below the declared " +
              "link latency of " + format_time(lookahead_) + ")");
}

}  // namespace shoal::core
