// The conservative parallel discrete-event engine.
//
// Each rank owns the entities its partition gives it and processes their events
// in key order (time, source entity, source sequence). Ranks advance together in
// windows [t0, t0 + L): t0 is the earliest pending event anywhere (so idle time is
// skipped) and L the lookahead, the smallest latency of a link cut by the
// partition. An event sent to another rank is at least L in the future, so it
// always lands in a later window; it is batched per destination rank and merged
// there by key. Every rank therefore processes exactly the events, in exactly the
// order, that one rank would: results do not depend on the partition.
//
// A model is any type with `void handle(const Event&, Simulator&)` (and, optionally,
// `void prefetch(const Event&) const` to warm the state an upcoming event will
// touch, called 12 events ahead, and `void prefetch_stage(const Event&, int stage)
// const`, called 8 (stage 1), 4 (stage 2) and 2 (stage 3) events ahead, to
// follow the pointers the stage before fetched); the loop is a template
// over it, so dispatch inlines (no virtual call per event).
//
// Inside a window a rank may take its events in either of two orders, with the
// same run (EventOrder): by key across the rank, or atom by atom. The second
// is the argument above for ranks, applied to atoms: an atom (a server, a
// switch) sends to another only over a link, at least the atoms' lookahead
// ahead, so a sub-window of that width can process each atom's events on its
// own, as if every atom were a rank. A switch's ports and lanes then stay in
// cache while it handles its sub-window's cells.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/event.hpp"
#include "shoal/core/event_queue.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/prefetch.hpp"
#include "shoal/core/progress.hpp"
#include "shoal/core/random.hpp"
#include "shoal/core/sparse_array.hpp"
#include "shoal/core/stop_signal.hpp"
#include "shoal/core/window_probe.hpp"

namespace shoal::core {

/// How a rank orders the events of one window (docs/architecture.md, the
/// event order rule). Both give the same run for a model whose entities
/// interact across atoms only by events (and, where it reads another atom's
/// state, only as Simulator::floor() allows).
enum class EventOrder : std::uint8_t {
  kTime,  // by key (time, source, sequence) over all of the rank's entities
  // Atom by atom within sub-windows as wide as the smallest latency of a link
  // between atoms, each atom's events by key. Where the layout has no such
  // link (one atom, or no latency between two), by key.
  kAtom,
};

struct EngineOptions {
  std::uint64_t seed = 1;
  EventOrder order = EventOrder::kTime;
  /// Events at or after this time are not processed; kTimeInfinity runs to exhaustion.
  Time end_time = kTimeInfinity;
  bool progress = true;
  double progress_interval_seconds = 5.0;
};

/// Whole-run figures, identical on every rank after run() returns.
struct RunSummary {
  int ranks = 1;
  std::string partition;
  Time lookahead = kTimeInfinity;
  Time sub_window = 0;      // atom order: the sub-windows' width; 0: time order
  Time simulated_time = 0;  // end time if reached, else the last event's time
  std::int64_t events = 0;
  std::int64_t remote_events = 0;  // events that crossed ranks
  std::int64_t windows = 0;
  double wall_seconds = 0;
  double sync_share_mean = 0;  // share of a rank's loop time spent synchronizing
  double sync_share_max = 0;
  /// The events over ranks x the busiest rank's events, summed window by
  /// window: 1 where every rank had as many events in every window, 1/ranks
  /// where one had them all. Counted, not timed: the same for every run of a
  /// config and partition, the best a partition's balance allows.
  double balance = 1.0;
  /// Of a rank's synchronizing, the share spent waiting for the slowest
  /// rank to finish its window's events (timed; the rest reduces and exchanges).
  double wait_share_mean = 0;
  bool stopped = false;  // a rank received SIGTERM or SIGINT: every rank stopped after one window
  double events_per_second() const { return wall_seconds > 0 ? events / wall_seconds : 0; }
  /// Percent of the events that were sent to another rank's entities.
  double remote_percent() const {
    return events > 0 ? 100.0 * static_cast<double>(remote_events) / static_cast<double>(events)
                      : 0.0;
  }
};

class Simulator {
 public:
  Simulator(const Comm& comm, const Layout& layout, const Partition& partition,
            const EngineOptions& options);

  // --- for models, inside handle() ---
  Time now() const { return now_; }
  /// The entity whose event is being handled.
  EntityId current() const { return current_; }
  /// The current entity's random stream.
  Rng& rng() { return cores_[current_].rng; }
  /// The earliest time at which entity `e` (this rank's) may next handle an
  /// event: a bound for a model that changes another entity's state ahead of
  /// an event (Network::credit_early). In time order, now(). In atom order,
  /// where atoms are processed by ascending id: an atom already processed is
  /// at the sub-window's end, the current one at now(), one still to come at
  /// the sub-window's start; between windows, where every atom has processed
  /// its events, the end of the last.
  Time floor(EntityId e) const {
    if (!atom_order_) return now_;
    if (sub_end_ == kNoSubWindow) return done_until_;
    const AtomId a = atom_of_[e];
    return a < current_atom_ ? sub_end_ : a == current_atom_ ? now_ : sub_start_;
  }

  /// The earliest time at which any of this rank's entities may next handle
  /// an event: the least floor() over them.
  Time rank_floor() const {
    if (!atom_order_) return now_;
    return sub_end_ == kNoSubWindow ? done_until_ : sub_start_;
  }

  /// Schedules an event from the current entity to `target` at now() + delay.
  /// delay >= 0; to another rank's entity it must be at least the lookahead.
  [[gnu::always_inline]] void send(EntityId target, Time delay, std::uint32_t tag,
                                   std::uint64_t payload) {
    if (delay < 0 || target >= entity_count_) [[unlikely]]
      reject_send(current_, target, delay);
    enqueue(current_, target, saturating_add(now_, delay), tag, payload);
  }

  /// A credit (or any message) the model hands from the current entity to
  /// `target` for `time` without an event, or before deciding whether to send
  /// one (Network::return_credit): only `shoal scale`'s probe hears of it, to
  /// count the fewest windows (WindowProbe).
  void will_arrive(EntityId target, Time time) const {
    if (probe_ != nullptr) [[unlikely]]
      probe_arrival(target, time);
  }

  /// An event from the current entity in `stream` (1 to kStreams - 1),
  /// numbered `sequence` by the model: events keyed by what sends them (a
  /// GPU port's n-th cell, say) rather than by when, so a model can send them
  /// earlier, or not at all, without moving any other event in the order.
  /// A number is never given twice in a stream; of one time, a stream's events
  /// come after the entity's own (stream 0), by stream, then by number.
  [[gnu::always_inline]] void send_from(std::uint32_t stream, std::uint64_t sequence,
                                        EntityId target, Time delay, std::uint32_t tag,
                                        std::uint64_t payload) {
    if (stream == 0) [[unlikely]]
      reject_stream(stream, sequence);
    send_maybe_from(stream, sequence, target, delay, tag, payload);
  }
  /// send_from(), or send() where `stream` is 0: one path, for a model whose
  /// events are numbered by their sender in some places only.
  [[gnu::always_inline]] void send_maybe_from(std::uint32_t stream, std::uint64_t sequence,
                                              EntityId target, Time delay, std::uint32_t tag,
                                              std::uint64_t payload) {
    if (delay < 0 || target >= entity_count_) [[unlikely]]
      reject_send(current_, target, delay);
    if (stream == 0) {
      enqueue(current_, target, saturating_add(now_, delay), tag, payload);
      return;
    }
    if (stream >= kStreams || sequence > kMaxStreamSequence) [[unlikely]]
      reject_stream(stream, sequence);
    // A source's streams interleave: the queue checks a bucket's order.
    if (!streams_used_) [[unlikely]] {
      streams_used_ = true;
      queue_.set_pushed_in_order(false);
    }
    push(make_tiebreak(current_, stream, sequence), target, saturating_add(now_, delay), tag,
         payload);
  }
  /// A note to an entity on another rank, which its model's take_arrival must
  /// take: what that rank needs to handle events that come with it (the
  /// network's destination of a cell whose flow it does not hold). It is no
  /// event: it takes no number in any order and is never queued, so it moves
  /// no event's key, wherever the ranks are cut. Like an event, it arrives at
  /// now + delay, outside the lookahead window, and not at all past the end.
  void send_note(EntityId target, Time delay, std::uint32_t tag, std::uint64_t payload);
  /// The rank that owns entity `e`.
  int rank_of(EntityId e) const { return single_rank_ ? rank_ : entity_rank_[e]; }
  /// The key of the event being handled: with send_from(), where a model must
  /// tell whether one of its numbered events would come before it.
  std::uint64_t current_tiebreak() const { return current_tiebreak_; }

  // --- for models, before run() ---
  bool owns(EntityId e) const { return entity_rank_[e] == rank_; }
  Rng& rng(EntityId e) {
    if (e >= entity_count_ || !owns(e)) reject_act_as(e);
    return cores_[e].rng;
  }
  /// Before run(): makes `e` (owned here) the sender of what send() schedules,
  /// so set-up work done for an entity numbers its events in that entity's own
  /// sequence, whatever rank does the set-up (the event order stays
  /// partition-independent).
  void act_as(EntityId e) {
    if (e >= entity_count_ || !owns(e)) reject_act_as(e);
    current_ = e;
  }
  /// An initial event from owned entity `source` at absolute time `time` >= 0.
  void schedule_initial(EntityId source, EntityId target, Time time, std::uint32_t tag,
                        std::uint64_t payload);

  template <class Model>
  RunSummary run(Model& model);

  /// `shoal scale`: before any event, on one rank, runs in the probe's
  /// windows (those of a run on more ranks) instead of in one, and has it
  /// see every event sent. Its model (ProbedModel) reports those handled.
  void attach_probe(WindowProbe& probe);

  const Comm& comm() const { return comm_; }
  const Layout& layout() const { return layout_; }
  Time lookahead() const { return lookahead_; }
  Time end_time() const { return end_time_; }
  std::int64_t local_events() const { return events_; }
  /// Events processed by all ranks as of the last synchronization: the same on
  /// every rank there, so collective work can be paced by it.
  std::int64_t global_events() const { return global_events_; }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kPrefetchDistance = 12;

  [[gnu::always_inline]] void enqueue(EntityId source, EntityId target, Time time,
                                      std::uint32_t tag, std::uint64_t payload) {
    std::uint64_t& seq = cores_[source].sequence;
    if (seq > kMaxStreamSequence) [[unlikely]]
      reject_sequence(source);
    push(make_tiebreak(source, seq++), target, time, tag, payload);
  }
  [[gnu::always_inline]] void push(std::uint64_t tiebreak, EntityId target, Time time,
                                   std::uint32_t tag, std::uint64_t payload) {
    if (time >= end_time_) {  // never processed: keep the queue small, remember it existed
      events_beyond_end_ = true;
      return;
    }
    if (probe_ != nullptr) [[unlikely]]
      probe_send(time, tiebreak, target, tag);
    if (time < sub_end_) [[unlikely]] {  // atom order: for the current atom, in this sub-window
      push_local(time, tiebreak, target, tag, payload);
      return;
    }
    const int owner = single_rank_ ? 0 : entity_rank_[target];
    if (owner == rank_) {
      queue_.push(time, tiebreak, target, tag, payload);  // by field: see EventBuffer
    } else {
      const Event ev{time, tiebreak, target, tag, payload};
      if (time < window_end_) [[unlikely]]
        reject_lookahead(ev);
      outboxes_[static_cast<std::size_t>(owner)].push_back(ev);
      if (time < next_outgoing_) next_outgoing_ = time;
      ++remote_sent_;
    }
  }

  /// Atom order: an event for the current atom inside the sub-window, into
  /// the heap local_. Sifted up by hand from the fields, which stay in
  /// registers: an Event built in memory and read back whole stalls the
  /// store buffer (event_buffer.hpp).
  void push_local(Time time, std::uint64_t tiebreak, EntityId target, std::uint32_t tag,
                  std::uint64_t payload) {
    if (atom_of_[target] != current_atom_) [[unlikely]]
      reject_atom_lookahead(Event{time, tiebreak, target, tag, payload});
    std::size_t hole = local_.size();
    local_.emplace_back();
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / 2;
      const Event& p = local_[parent];
      if (p.time < time || (p.time == time && p.tiebreak < tiebreak)) break;
      local_[hole] = p;
      hole = parent;
    }
    Event& e = local_[hole];
    e.time = time;
    e.tiebreak = tiebreak;
    e.target = target;
    e.tag = tag;
    e.payload = payload;
  }
  static constexpr auto later = [](const Event& a, const Event& b) { return before(b, a); };
  /// The entity state of the events a few places on in `ahead` (the events
  /// to come, the next first) is fetched while the first one runs; later
  /// stages, closer, read what the stage before fetched to find (and fetch)
  /// what that points to.
  template <class Model>
  [[gnu::always_inline]] void prefetch_ahead(const Model& model, std::span<const Event> ahead) {
    if (ahead.size() > kPrefetchDistance) {
      const Event& soon = ahead[kPrefetchDistance];
      prefetch(&cores_[soon.target]);
      if constexpr (requires { model.prefetch(soon); }) model.prefetch(soon);
    }
    if constexpr (requires { model.prefetch_stage(ahead[0], 1); }) {
      if (ahead.size() > kPrefetchDistance * 2 / 3) {
        model.prefetch_stage(ahead[kPrefetchDistance * 2 / 3], 1);
      }
      if (ahead.size() > kPrefetchDistance / 3)
        model.prefetch_stage(ahead[kPrefetchDistance / 3], 2);
      if (ahead.size() > kPrefetchDistance / 6)
        model.prefetch_stage(ahead[kPrefetchDistance / 6], 3);
    }
  }
  /// The window's events in atom order (run()).
  template <class Model>
  void run_atoms(Model& model, std::int64_t ranks);
  /// Moves the queue's events before sub_end_ into by_atom_, grouped by atom,
  /// each atom's in key order.
  void gather_by_atom();
  /// Exchanges the window's events (received into inbox_, for the model's
  /// take_arrival and then the queue); returns the earliest pending event anywhere.
  Time synchronize();
  RunSummary summarize(double wall_seconds, double sync_seconds, double work_seconds) const;
  [[noreturn]] void reject_send(EntityId source, EntityId target, Time delay) const;
  [[noreturn]] void reject_sequence(EntityId source) const;
  [[noreturn]] void reject_stream(std::uint32_t stream, std::uint64_t sequence) const;
  [[noreturn]] void reject_lookahead(const Event& ev) const;
  // Out of line: the probe's counting stays out of the send path's code.
  [[gnu::noinline]] void probe_send(Time time, std::uint64_t tiebreak, EntityId target,
                                    std::uint32_t tag) const;
  [[gnu::noinline]] void probe_arrival(EntityId target, Time time) const;
  /// Set-up (act_as, rng) for an entity that is not this rank's.
  [[noreturn]] void reject_act_as(EntityId e) const;
  [[noreturn]] void reject_atom_lookahead(const Event& ev) const;

  const Comm& comm_;
  const Layout& layout_;
  std::string partition_name_;
  EntityId entity_count_;
  int rank_;
  bool single_rank_;                        // every entity is local: skip the owner lookup
  std::vector<std::uint16_t> entity_rank_;  // 2 bytes: the send path's table stays in cache
  /// An entity's engine state, together so that handling an event touches one place.
  struct alignas(64) EntityCore {  // one cache line each
    Rng rng;
    std::uint64_t sequence = 0;  // events this entity has sent
  };
  // By entity, only this rank's constructed: the others' pages are never
  // touched, so a rank's share of the engine's state falls with ranks.
  SparseArray<EntityCore> cores_;
  Time lookahead_;
  Time end_time_;

  EventQueue queue_{/*pushed_in_order=*/true};  // the engine sends each source's in order
  // Atom order (EventOrder::kAtom, where the layout allows it).
  bool atom_order_ = false;
  Time atom_lookahead_ = kTimeInfinity;  // the smallest latency of a link between atoms
  std::vector<AtomId> atom_of_;          // by entity
  std::size_t atom_count_ = 0;
  // The sub-window being processed, [sub_start_, sub_end_); sub_end_ is the
  // earliest time outside one, so that push() sends nothing to local_.
  static constexpr Time kNoSubWindow = std::numeric_limits<Time>::min();
  Time sub_start_ = 0;
  Time sub_end_ = kNoSubWindow;
  Time done_until_ = 0;  // every atom has processed its events before this
  AtomId current_atom_ = 0;
  std::vector<Event> local_;     // min-heap: what the current atom sent into the sub-window
  std::vector<Event> gathered_;  // gather_by_atom's scratch
  std::vector<Event> by_atom_;   // the sub-window's events from the queue, by atom
  std::vector<std::uint32_t> atom_counts_;   // gather_by_atom's: by atom, then where its next goes
  std::vector<std::uint32_t> atom_first_;    // ... and where its events start
  std::vector<std::uint8_t> atom_unsorted_;  // by atom: gather_by_atom must sort its events
  std::vector<AtomId> unsorted_atoms_;
  std::vector<std::vector<Event>> outboxes_;
  std::vector<std::int64_t> sent_to_;  // by rank: 1 if this window sends it a batch
  std::vector<Event> inbox_;
  WindowProbe* probe_ = nullptr;

  Time now_ = 0;
  EntityId current_ = 0;
  std::uint64_t current_tiebreak_ = 0;
  bool streams_used_ = false;  // send_from() was called
  Time window_end_ = 0;
  Time next_outgoing_ = kTimeInfinity;  // the earliest event sent to another rank this window
  Time last_event_time_ = 0;
  std::int64_t events_ = 0;
  std::int64_t remote_sent_ = 0;
  std::int64_t windows_ = 0;
  std::int64_t exchanges_ = 0;       // synchronizations on more than one rank: Comm::send_events
  std::int64_t busiest_sum_ = 0;     // over windows, the most events a rank processed in one
  std::int64_t window_work_ns_ = 0;  // this rank's time on the window's events
  std::int64_t waited_ns_ = 0;      // over windows, the slowest rank's time on them less this one's
  std::int64_t global_events_ = 0;  // all ranks, as of the last synchronization
  std::int64_t events_at_sync_ = 0;
  bool reached_end_time_ = false;
  bool stopped_ = false;
  bool events_beyond_end_ = false;  // an event was scheduled at or after end_time_
  Progress progress_;
};

template <class Model>
RunSummary Simulator::run(Model& model) {
  const auto start = Clock::now();
  double sync_seconds = 0;
  double work_seconds = 0;
  auto mark = start;
  for (;;) {
    const Time next = synchronize();
    // Arrival order is irrelevant: the queue orders by key. A model may take an
    // event as it arrives instead (the network adds a credit that no event
    // could tell from one added early); what it takes is not an event.
    for (const Event& ev : inbox_) {
      if constexpr (requires { model.take_arrival(ev, *this); }) {
        if (model.take_arrival(ev, *this)) continue;
      }
      queue_.push(ev);
    }
    const auto synced = Clock::now();
    sync_seconds += std::chrono::duration<double>(synced - mark).count();
    mark = synced;
    progress_.update(next == kTimeInfinity ? last_event_time_ : next, global_events_);
    // Every rank is here after the same synchronizations: a place for collective work.
    if constexpr (requires { model.after_sync(*this); }) model.after_sync(*this);
    if (stopped_) break;
    if (next >= end_time_) {
      reached_end_time_ = next != kTimeInfinity;
      break;
    }
    window_end_ = std::min(saturating_add(next, lookahead_), end_time_);
    ++windows_;
    const std::int64_t ranks = comm_.size();
    if (atom_order_) {
      run_atoms(model, ranks);
    } else {
      while (!queue_.empty() && queue_.top().time < window_end_) {
        // Taken once: prefetching pushes and pops nothing.
        prefetch_ahead(model, queue_.sorted_ahead());
        const Event ev = queue_.top();
        now_ = ev.time;
        current_ = ev.target;
        current_tiebreak_ = ev.tiebreak;
        // Out before the handler runs: a zero-delay event it sends from a smaller
        // entity id has a smaller key and must not be taken for this one.
        queue_.pop();
        model.handle(ev, *this);
        if ((++events_ & 0xFFFF) == 0) [[unlikely]] {
          progress_.update(now_, global_events_ + (events_ - events_at_sync_) * ranks);
          // Local (not collective) work every 65,536 events, e.g. invariant checks.
          if constexpr (requires { model.every_batch(*this); }) model.every_batch(*this);
          // One rank has a single unbounded window: look for a stop request here too.
          if (ranks == 1 && stop_requested()) {
            last_event_time_ = now_;
            break;
          }
        }
      }
    }
    if (events_ > 0) last_event_time_ = std::max(last_event_time_, now_);
    const auto worked = Clock::now();
    window_work_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(worked - mark).count();
    work_seconds += std::chrono::duration<double>(worked - mark).count();
    mark = worked;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  return summarize(wall, sync_seconds, work_seconds);
}

template <class Model>
void Simulator::run_atoms(Model& model, std::int64_t ranks) {
  while (!queue_.empty()) {
    sub_start_ = queue_.next_time();
    if (sub_start_ >= window_end_) break;
    sub_end_ = std::min(saturating_add(sub_start_, atom_lookahead_), window_end_);
    gather_by_atom();
    const std::size_t n = by_atom_.size();
    const std::int64_t events_before = events_;
    Time latest = sub_start_;
    std::size_t k = 0;
    while (k < n) {
      current_atom_ = atom_of_[by_atom_[k].target];
      // This atom's events: the queue's, by_atom_[k..), merged by key with
      // those it sends itself into the sub-window (local_).
      for (;;) {
        const bool queued = k < n && atom_of_[by_atom_[k].target] == current_atom_;
        const bool local = !local_.empty() && (!queued || before(local_.front(), by_atom_[k]));
        Event ev;
        if (local) {
          ev = local_.front();
          std::pop_heap(local_.begin(), local_.end(), later);
          local_.pop_back();
        } else if (queued) {
          prefetch_ahead(model, std::span<const Event>(by_atom_.data() + k, n - k));
          ev = by_atom_[k++];
        } else {
          break;
        }
        now_ = ev.time;
        current_ = ev.target;
        current_tiebreak_ = ev.tiebreak;
        latest = std::max(latest, ev.time);
        model.handle(ev, *this);
        ++events_;
      }
    }
    done_until_ = sub_end_;
    sub_end_ = kNoSubWindow;
    last_event_time_ = std::max(last_event_time_, latest);
    if ((events_ >> 16) != (events_before >> 16)) [[unlikely]] {
      // Every 65,536 events, between sub-windows (where every atom is at sub_end_).
      progress_.update(sub_start_, global_events_ + (events_ - events_at_sync_) * ranks);
      if constexpr (requires { model.every_batch(*this); }) model.every_batch(*this);
      if (ranks == 1 && stop_requested()) return;
    }
  }
  if (window_end_ != kTimeInfinity) done_until_ = window_end_;  // nothing before it is left
}

}  // namespace shoal::core
