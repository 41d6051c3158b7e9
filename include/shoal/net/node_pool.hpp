// Nodes of linked lists in one flat array, addressed by 32-bit index, with a
// free list threaded through their `next` field: no allocation once the pool
// has grown to the run's working size, and a freed node is the next one reused
// (still warm in cache).
#pragma once

#include <cstdint>
#include <vector>

#include "shoal/core/prefetch.hpp"

namespace shoal::net {

template <class Node>  // Node has a std::uint32_t `next`
class NodePool {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  /// A node holding `value` (its `next` as given); reuses a freed one first.
  std::uint32_t add(const Node& value) {
    std::uint32_t i = free_;
    if (i == kNone) {
      i = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back(value);
    } else {
      free_ = nodes_[i].next;
      // The free list's head is the next add()'s first read, and a node freed
      // long ago is cold: fetch it now, while the caller works on this one.
      if (free_ != kNone) core::prefetch(&nodes_[free_]);
      nodes_[i] = value;
    }
    return i;
  }
  void release(std::uint32_t i) {
    nodes_[i].next = free_;
    free_ = i;
  }
  /// The node add() will reuse next, or kNone: for prefetching.
  std::uint32_t next_free() const { return free_; }

  Node& operator[](std::uint32_t i) { return nodes_[i]; }
  const Node& operator[](std::uint32_t i) const { return nodes_[i]; }

 private:
  std::vector<Node> nodes_;
  std::uint32_t free_ = kNone;
};

}  // namespace shoal::net
