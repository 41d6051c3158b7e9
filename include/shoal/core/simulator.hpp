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
#pragma once

#include <chrono>
#include <cstdint>
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
#include "shoal/core/stop_signal.hpp"

namespace shoal::core {

struct EngineOptions {
  std::uint64_t seed = 1;
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
  Time simulated_time = 0;  // end time if reached, else the last event's time
  std::int64_t events = 0;
  std::int64_t remote_events = 0;  // events that crossed ranks
  std::int64_t windows = 0;
  double wall_seconds = 0;
  double sync_share_mean = 0;  // share of a rank's loop time spent synchronizing
  double sync_share_max = 0;
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

  /// Schedules an event from the current entity to `target` at now() + delay.
  /// delay >= 0; to another rank's entity it must be at least the lookahead.
  [[gnu::always_inline]] void send(EntityId target, Time delay, std::uint32_t tag,
                                   std::uint64_t payload) {
    if (delay < 0 || target >= entity_count_) [[unlikely]]
      reject_send(current_, target, delay);
    enqueue(current_, target, saturating_add(now_, delay), tag, payload);
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
  /// The key of the event being handled: with send_from(), where a model must
  /// tell whether one of its numbered events would come before it.
  std::uint64_t current_tiebreak() const { return current_tiebreak_; }

  // --- for models, before run() ---
  bool owns(EntityId e) const { return entity_rank_[e] == rank_; }
  Rng& rng(EntityId e) { return cores_[e].rng; }
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

  /// Exchanges window slots and events (received into inbox_, for the model's
  /// take_arrival and then the queue); returns the earliest pending event anywhere.
  Time synchronize();
  RunSummary summarize(double wall_seconds, double sync_seconds, double work_seconds) const;
  [[noreturn]] void reject_send(EntityId source, EntityId target, Time delay) const;
  [[noreturn]] void reject_sequence(EntityId source) const;
  [[noreturn]] void reject_stream(std::uint32_t stream, std::uint64_t sequence) const;
  [[noreturn]] void reject_lookahead(const Event& ev) const;
  [[noreturn]] void reject_act_as(EntityId e) const;

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
  std::vector<EntityCore> cores_;
  Time lookahead_;
  Time end_time_;

  EventQueue queue_{/*pushed_in_order=*/true};  // the engine sends each source's in order
  std::vector<std::vector<Event>> outboxes_;
  std::vector<Event> inbox_;
  std::vector<WindowSlot> slots_out_, slots_in_;

  Time now_ = 0;
  EntityId current_ = 0;
  std::uint64_t current_tiebreak_ = 0;
  bool streams_used_ = false;  // send_from() was called
  Time window_end_ = 0;
  Time next_outgoing_ = kTimeInfinity;
  Time last_event_time_ = 0;
  std::int64_t events_ = 0;
  std::int64_t remote_sent_ = 0;
  std::int64_t windows_ = 0;
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
    while (!queue_.empty() && queue_.top().time < window_end_) {
      // The entity state of an event a few places on is fetched while this one
      // runs. Taken once: prefetching pushes and pops nothing.
      const std::span<const Event> ahead = queue_.sorted_ahead();
      if (ahead.size() > kPrefetchDistance) {
        const Event& soon = ahead[kPrefetchDistance];
        prefetch(&cores_[soon.target]);
        if constexpr (requires { model.prefetch(soon); }) model.prefetch(soon);
      }
      // Later stages, closer: the model reads what the stage before fetched to
      // find (and fetch) what that points to.
      if constexpr (requires { model.prefetch_stage(ahead[0], 1); }) {
        if (ahead.size() > kPrefetchDistance * 2 / 3) {
          model.prefetch_stage(ahead[kPrefetchDistance * 2 / 3], 1);
        }
        if (ahead.size() > kPrefetchDistance / 3) {
          model.prefetch_stage(ahead[kPrefetchDistance / 3], 2);
        }
        if (ahead.size() > kPrefetchDistance / 6) {
          model.prefetch_stage(ahead[kPrefetchDistance / 6], 3);
        }
      }
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
    if (events_ > 0) last_event_time_ = std::max(last_event_time_, now_);
    const auto worked = Clock::now();
    work_seconds += std::chrono::duration<double>(worked - mark).count();
    mark = worked;
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  return summarize(wall, sync_seconds, work_seconds);
}

}  // namespace shoal::core
