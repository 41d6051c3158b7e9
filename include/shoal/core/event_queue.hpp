// Pending events of one rank, served in exact key order.
//
// A calendar of time buckets rather than one big heap: a push appends to the
// bucket of its time (sequential writes), and a bucket is sorted only when the
// run reaches it, so the events being served sit in one small sorted array and
// the next few are known in advance (the engine prefetches their entities'
// state). Events pushed for a time already reached go to a small heap that is
// merged on the fly. When the buckets run out, the events beyond them are spread
// over new buckets sized from their own density, so the width follows the
// model's. Where a few events lie far beyond the rest (a training run's compute
// completions milliseconds ahead of cells due within microseconds), the density
// is taken from the earlier half of the events. When the density rises after a spread
// (a burst of communication after compute) the heap grows; past a limit, and at
// most once per pending-count pushes (so it costs O(1) per push), every pending
// event is spread again.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "shoal/core/bucket_sort.hpp"
#include "shoal/core/event.hpp"
#include "shoal/core/event_buffer.hpp"

namespace shoal::core {

class EventQueue {
 public:
  /// `pushed_in_order`: each source's events of one time are pushed in
  /// sequence order, as the engine sends them (a rank's inbox keeps each
  /// source's order too), so a bucket sorted on (time, source) needs no check
  /// of the sequence numbers, except where a re-spread mixed them.
  explicit EventQueue(bool pushed_in_order = false) : pushed_in_order_(pushed_in_order) {}

  /// From now on, a source's events of one time may come out of sequence
  /// order (a model numbering streams of its own): buckets are checked.
  void set_pushed_in_order(bool in_order) { pushed_in_order_ = in_order; }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  /// The earliest pending event; the queue must not be empty. After
  /// take_before, only next_time() and take_before may read the queue.
  const Event& top() const {
    if (late_.empty()) return near_[head_];
    if (near_done() || before(late_.front(), near_[head_])) return late_.front();
    return near_[head_];
  }

  /// The sorted events still to serve, the next first: a hint for
  /// prefetching, not a promise of order (late pushes may come first). Valid
  /// until the next push or pop.
  std::span<const Event> sorted_ahead() const {
    return {near_.begin() + head_, near_.size() - head_};
  }

  void push(const Event& e) { push(e.time, e.tiebreak, e.target, e.tag, e.payload); }

  /// The same, from the fields: the engine's send path, where the fields are in
  /// registers (EventBuffer says why they should not go through memory).
  [[gnu::always_inline]] void push(Time time, std::uint64_t tiebreak, EntityId target,
                                   std::uint32_t tag, std::uint64_t payload) {
    ++size_;
    ++pushes_since_spread_;
    // Inline, the common cases: a time in the buckets or beyond them (a
    // cell's head a link's latency ahead lands beyond them as often as not),
    // while the queue holds other events and the heap of late pushes is small.
    if (time >= near_end_ && size_ > 1 &&
        (late_.size() <= kLateLimit || pushes_since_spread_ < size_)) [[likely]] {
      EventBuffer& to = time < ring_end_
                            ? buckets_[static_cast<std::size_t>((time - base_) >> width_shift_)]
                            : overflow_;
      to.emplace_back(time, tiebreak, target, tag, payload);
      return;
    }
    push_elsewhere(time, tiebreak, target, tag, payload);
  }

  void pop() {
    --size_;
    if (!late_.empty() && (near_done() || before(late_.front(), near_[head_]))) {
      std::pop_heap(late_.begin(), late_.end(), after);
      late_.pop_back();
    } else {
      ++head_;
    }
    if (near_done() && late_.empty() && size_ > 0) refill();
  }

  /// Moves every pending event before `t` to the end of `out`, each bucket's
  /// events in the order they were pushed: buckets in time order, but a bucket
  /// left unsorted (atom order groups them by atom and sorts each atom's few).
  /// Nothing may be pushed for a time before `t` afterwards.
  void take_before(Time t, std::vector<Event>& out) {
    const std::size_t taken_from = out.size();
    // The served bucket's events before t (sorted), then the late pushes
    // (lying before the next bucket, in no order). If either keeps events at
    // or after t, nothing in the buckets is before t.
    const Event* first = near_.begin() + head_;
    const Event* stop = first;
    while (stop != near_.end() && stop->time < t) ++stop;
    out.insert(out.end(), first, stop);
    head_ = static_cast<std::size_t>(stop - near_.begin());
    if (!late_.empty()) {
      late_.resize(split_before(t, late_, out));
      std::make_heap(late_.begin(), late_.end(), after);
    }
    if (near_done() && late_.empty()) {
      near_.shrink_to(0);
      head_ = 0;
      for (;;) {
        if (cursor_ == buckets_.size()) {
          if (overflow_.empty()) break;
          spread_overflow();
        }
        if (bucket_start(cursor_) >= t) break;
        EventBuffer& bucket = buckets_[cursor_];
        const Time end = bucket_start(cursor_ + 1);
        if (end <= t) {
          out.insert(out.end(), bucket.begin(), bucket.end());
          bucket.clear();
          ++cursor_;
          near_end_ = end;
          continue;
        }
        // The bucket t falls in: the rest stays in push order, which its
        // sort may trust (pushed_in_order).
        bucket.shrink_to(split_before(t, bucket, out));
        near_end_ = bucket_start(cursor_);
        break;
      }
    }
    // No bucket is sorted for top() here: the next bucket's end would become
    // near_end_, and what the sub-window sends before it would go to the heap.
    size_ -= out.size() - taken_from;
  }

  /// The earliest pending time; the queue must not be empty. Unlike top(), it
  /// is valid after take_before, and sorts nothing.
  Time next_time() {
    if (!(near_done() && late_.empty())) return top().time;
    for (;;) {
      if (cursor_ == buckets_.size()) spread_overflow();
      const EventBuffer& bucket = buckets_[cursor_];
      if (!bucket.empty()) {
        Time earliest = bucket[0].time;
        for (const Event& e : bucket) earliest = std::min(earliest, e.time);
        return earliest;
      }
      ++cursor_;
      near_end_ = bucket_start(cursor_);
    }
  }

  /// For tests and benchmarks: the current bucket width, and how often the
  /// pending events were spread again because the buckets were too wide.
  Time bucket_width() const { return width_; }
  std::uint64_t respreads() const { return respreads_; }

  /// pop() then push(e).
  void replace_top(const Event& e) {
    pop();
    push(e);
  }

 private:
  static constexpr std::size_t kEventsPerBucket = 128;
  static constexpr std::size_t kMaxBuckets = std::size_t{1} << 20;
  // A bucket this large is sorted by sorter_ where it can be, not std::sort.
  static constexpr std::size_t kRadixFrom = 48;
  static constexpr std::size_t kLateLimit = 4 * kEventsPerBucket;  // the heap grew: re-spread
  static constexpr std::size_t kSample = 64;                       // times sampled for the density
  static constexpr Time kNoTime = std::numeric_limits<Time>::min();

  bool near_done() const { return head_ == near_.size(); }

  /// Appends the events of `from` before t to `out` and keeps the others at
  /// its front, in their order; returns how many it keeps.
  template <class Events>
  static std::size_t split_before(Time t, Events& from, std::vector<Event>& out) {
    std::size_t kept = 0;
    for (const Event& e : from) {
      if (e.time < t) {
        out.push_back(e);
      } else {
        from[kept++] = e;
      }
    }
    return kept;
  }

  /// Function objects, not function pointers, so std::sort and the heap inline them.
  struct After {
    bool operator()(const Event& a, const Event& b) const { return key_before(b, a); }
  };
  static constexpr After after{};
  struct Earlier {
    bool operator()(const Event& a, const Event& b) const { return key_before(a, b); }
  };
  static constexpr Earlier earlier{};

  [[gnu::noinline]] void push_elsewhere(Time time, std::uint64_t tiebreak, EntityId target,
                                        std::uint32_t tag, std::uint64_t payload) {
    if (time < near_end_) {
      late_.push_back(Event{time, tiebreak, target, tag, payload});
      std::push_heap(late_.begin(), late_.end(), after);
    } else if (time < ring_end_) {
      buckets_[static_cast<std::size_t>((time - base_) >> width_shift_)].emplace_back(
          time, tiebreak, target, tag, payload);
    } else {
      overflow_.emplace_back(time, tiebreak, target, tag, payload);
    }
    if (near_done() && late_.empty()) {
      refill();
    } else if (late_.size() > kLateLimit && pushes_since_spread_ >= size_) [[unlikely]] {
      respread();
    }
  }

  /// Moves the next non-empty bucket, sorted, into near_. Needs near_ served
  /// and late_ empty.
  void refill() {
    near_.shrink_to(0);  // keeps its block for the swap below
    head_ = 0;
    while (cursor_ < buckets_.size() && buckets_[cursor_].empty()) ++cursor_;
    if (cursor_ == buckets_.size()) {
      spread_overflow();
      while (buckets_[cursor_].empty()) ++cursor_;
    }
    EventBuffer& bucket = buckets_[cursor_];
    if (!(bucket.size() >= kRadixFrom &&
          sorter_.sort(bucket, near_, pushed_in_order_ && !ring_mixed_))) {
      std::sort(bucket.begin(), bucket.end(), earlier);
      near_.swap(bucket);  // the old near_ (empty) goes to the bucket
      bucket.clear();      // ... and back to the allocator if it is large
    }
    ++cursor_;
    near_end_ = bucket_start(cursor_);
  }

  Time bucket_start(std::size_t k) const {
    const auto t = static_cast<__int128>(base_) + static_cast<__int128>(width_) * k;
    return t > std::numeric_limits<Time>::max() ? std::numeric_limits<Time>::max()
                                                : static_cast<Time>(t);
  }

  /// Spreads the overflow over fresh buckets, about kEventsPerBucket events in
  /// each (of its earlier half, where a sparse far tail would widen them), as
  /// far as the overflow reaches but at most four times as many buckets as its
  /// events fill; what lies beyond stays in the overflow.
  void spread_overflow() {
    Time lo = overflow_.front().time;
    Time hi = lo;
    for (const Event& e : overflow_) {
      lo = std::min(lo, e.time);
      hi = std::max(hi, e.time);
    }
    const std::size_t n = overflow_.size();
    sample_.clear();
    for (std::size_t i = 0; i < n; i += std::max<std::size_t>(n / kSample, 1))
      sample_.push_back(overflow_[i].time);
    const auto middle = sample_.begin() + static_cast<std::ptrdiff_t>(sample_.size() / 2);
    std::nth_element(sample_.begin(), middle, sample_.end());
    const std::size_t count = std::clamp<std::size_t>(n / kEventsPerBucket, 1, kMaxBuckets);
    // Width: the smallest power of two that covers the span in `count` buckets
    // (a push finds its bucket with a shift); but where the later half is
    // spread over 64 times the earlier half's span, a sparse far tail, the
    // earlier half in half as many. At most 2^62, so the width stays a positive
    // Time.
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    const auto half_span = static_cast<std::uint64_t>(*middle - lo) + 1;
    const bool far_tail = static_cast<unsigned __int128>(half_span) * 64 < span;
    const std::uint64_t cover = far_tail ? half_span : span;
    const std::size_t over = far_tail ? std::max<std::size_t>(count / 2, 1) : count;
    width_shift_ = 0;
    while (width_shift_ < 62 && (static_cast<unsigned __int128>(1) << width_shift_) * over < cover)
      ++width_shift_;
    width_ = Time{1} << width_shift_;
    const std::size_t used = static_cast<std::size_t>(
        std::min<std::uint64_t>(((span - 1) >> width_shift_) + 1, 4 * std::uint64_t{count}));
    for (std::size_t b = used; b < buckets_.size(); ++b) buckets_[b].clear();
    buckets_.resize(used);
    base_ = lo;
    cursor_ = 0;
    near_end_ = base_;  // anything pushed before the span goes to late_
    ring_end_ = bucket_start(used);
    std::size_t kept = 0;  // the overflow beyond the ring, compacted in place
    for (const Event& e : overflow_) {
      if (e.time < ring_end_) {
        buckets_[static_cast<std::size_t>((e.time - base_) >> width_shift_)].push_back(e);
      } else {
        overflow_[kept++] = e;
      }
    }
    overflow_.shrink_to(kept);
    ring_mixed_ = overflow_mixed_;
    if (kept == 0) overflow_mixed_ = false;
    pushes_since_spread_ = 0;
  }

  /// Every pending event back into the overflow, spread again: the buckets
  /// were too wide for the events now coming.
  void respread() {
    ++respreads_;
    overflow_mixed_ = true;  // the heap's events go in out of push order
    overflow_.append(near_.begin() + head_, near_.end());
    overflow_.append(late_.data(), late_.data() + late_.size());
    near_.clear();
    head_ = 0;
    late_.clear();
    for (std::size_t b = cursor_; b < buckets_.size(); ++b) {
      overflow_.append(buckets_[b].begin(), buckets_[b].end());
      buckets_[b].clear();
    }
    cursor_ = buckets_.size();
    refill();  // spreads the overflow, then serves its first bucket
  }

  bool pushed_in_order_;
  std::size_t size_ = 0;
  EventBuffer near_;  // sorted, earliest first; served from head_
  std::size_t head_ = 0;
  std::vector<Event> late_;  // min-heap of pushes for times before near_end_
  std::vector<EventBuffer> buckets_;
  EventBuffer overflow_;      // times at or after ring_end_
  std::vector<Time> sample_;  // spread_overflow's scratch
  BucketSorter sorter_;
  // With pushed_in_order_, a source's events of one time reach a bucket in
  // sequence order, except those a re-spread put back into the overflow:
  // while the overflow holds any, the buckets laid out from it are checked.
  bool overflow_mixed_ = false;
  bool ring_mixed_ = false;
  std::size_t pushes_since_spread_ = 0;
  std::uint64_t respreads_ = 0;
  Time base_ = 0;
  Time width_ = 1;
  int width_shift_ = 0;
  std::size_t cursor_ = 0;   // next bucket to serve
  Time near_end_ = kNoTime;  // near_ and late_ hold times before this
  Time ring_end_ = kNoTime;  // buckets hold times before this
};

}  // namespace shoal::core
