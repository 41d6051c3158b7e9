// Append-only storage in chunks that never move: what the DAG's nodes point
// into for their names and dependency lists.
//
// A std::string and a std::vector per node cost a heap block each (its header
// and rounding) on top of the node's own 56 bytes for them; at a few hundred
// thousand nodes per rank that was tens of megabytes, held for the whole run.
// Here a name is its characters and a list its references, packed, and a node
// keeps a view of them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace shoal::work {

template <class T>
class StableArena {
 public:
  static constexpr std::size_t kChunk = 65536 / sizeof(T);

  StableArena() = default;
  // A moved-from arena starts afresh rather than write into chunks it gave away.
  StableArena(StableArena&& other) noexcept
      : chunks_(std::move(other.chunks_)),
        next_(std::exchange(other.next_, nullptr)),
        room_(std::exchange(other.room_, 0)) {}
  StableArena& operator=(StableArena&& other) noexcept {
    chunks_ = std::move(other.chunks_);
    next_ = std::exchange(other.next_, nullptr);
    room_ = std::exchange(other.room_, 0);
    return *this;
  }

  /// A copy of `items` that stays where it is for the arena's life (moves of
  /// the arena included).
  std::span<const T> copy(std::span<const T> items) {
    if (items.empty()) return {};
    if (items.size() > room_) {
      const std::size_t size = std::max(kChunk, items.size());
      chunks_.push_back(std::make_unique_for_overwrite<T[]>(size));
      next_ = chunks_.back().get();
      room_ = size;
    }
    T* at = next_;
    std::copy(items.begin(), items.end(), at);
    next_ += items.size();
    room_ -= items.size();
    return {at, items.size()};
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  T* next_ = nullptr;
  std::size_t room_ = 0;
};

}  // namespace shoal::work
