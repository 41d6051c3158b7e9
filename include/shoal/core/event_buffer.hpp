// A growable array of events whose append is always inline.
//
// Why not std::vector: GCC keeps vector::push_back out of line on the event
// queue's path, so every event went through memory as a reference, copied
// with 16-byte loads of fields the sender had just written with 4- and 8-byte
// stores. Such a load cannot be forwarded from the store buffer; it waits
// until those stores, and every older one (the handler's writes to cold port
// and queue lines), have reached the cache. Inline, the fields go from
// registers straight to the bucket.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "shoal/core/event.hpp"

namespace shoal::core {

class EventBuffer {
 public:
  static constexpr std::size_t kKept = 4096;  // events (128 KiB) a cleared buffer keeps

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  Event* begin() { return items_.get(); }
  Event* end() { return items_.get() + size_; }
  const Event* begin() const { return items_.get(); }
  const Event* end() const { return items_.get() + size_; }
  Event& operator[](std::size_t i) { return items_[i]; }
  const Event& operator[](std::size_t i) const { return items_[i]; }
  Event& front() { return items_[0]; }
  const Event& front() const { return items_[0]; }
  const Event& back() const { return items_[size_ - 1]; }

  void push_back(const Event& e) {
    if (size_ == capacity_) [[unlikely]]
      grow(size_ + 1);
    items_[size_++] = e;
  }
  /// push_back(Event{...}), field by field: nothing is read back from memory.
  [[gnu::always_inline]] void emplace_back(Time time, std::uint64_t tiebreak, EntityId target,
                                           std::uint32_t tag, std::uint64_t payload) {
    if (size_ == capacity_) [[unlikely]]
      grow(size_ + 1);
    Event& e = items_[size_++];
    e.time = time;
    e.tiebreak = tiebreak;
    e.target = target;
    e.tag = tag;
    e.payload = payload;
  }
  /// n events whose values the caller writes next.
  void resize_for_overwrite(std::size_t n) {
    if (n > capacity_) grow(n);
    size_ = n;
  }
  void pop_back() { --size_; }
  /// Empties it. A block of up to kKept events stays for reuse; a larger one
  /// goes back to the allocator. The queue's buckets are filled one after
  /// another, and blocks each kept at its largest size ever were most of a
  /// run's peak memory: ep-8192's peak fell from 561 MiB to 161 MiB with this.
  void clear() {
    size_ = 0;
    if (capacity_ > kKept) {
      items_.reset();
      capacity_ = 0;
    }
  }
  /// Keeps the first `n` events (n <= size()).
  void shrink_to(std::size_t n) { size_ = n; }
  void append(const Event* first, const Event* last) {
    const auto n = static_cast<std::size_t>(last - first);
    if (size_ + n > capacity_) grow(size_ + n);
    std::copy(first, last, items_.get() + size_);
    size_ += n;
  }
  void swap(EventBuffer& other) noexcept {
    std::swap(items_, other.items_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

 private:
  [[gnu::noinline]] void grow(std::size_t at_least) {
    // Doubling from one event, as std::vector does. The new block is left
    // untouched past what is copied, so its pages stay out of the resident set
    // until used (constructing its events would touch every page of it).
    const std::size_t capacity = std::max(at_least, capacity_ * 2);
    Storage bigger(static_cast<Event*>(::operator new(capacity * sizeof(Event))));
    std::copy(begin(), end(), bigger.get());
    items_ = std::move(bigger);
    capacity_ = capacity;
  }

  // operator new creates the Events implicitly (they are trivially copyable):
  // no constructor runs over the block.
  struct Release {
    void operator()(Event* p) const { ::operator delete(p); }
  };
  using Storage = std::unique_ptr<Event[], Release>;
  static_assert(std::is_trivially_copyable_v<Event> && std::is_trivially_destructible_v<Event>);

  Storage items_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace shoal::core
