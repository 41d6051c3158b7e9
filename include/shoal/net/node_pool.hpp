// Nodes of linked lists in one flat array, addressed by 32-bit index, with the
// freed nodes' indices on a stack: no allocation once the pool has grown to
// the run's working size, and a freed node is the next one reused (warm in
// cache, if it was freed recently). A stack rather than a list threaded
// through the nodes: taking a node then only writes it, where a list first
// read the node's link to find the next one, a cache miss whenever the list
// had reached nodes freed long ago (docs/performance.md, thirteenth
// measurement).
#pragma once

#include <cstdint>
#include <vector>

#include "shoal/core/prefetch.hpp"

namespace shoal::net {

template <class Node>
class NodePool {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  /// A node holding `value` (its `next` as given); reuses a freed one first.
  std::uint32_t add(const Node& value) {
    std::uint32_t i;
    if (free_.empty()) {
      i = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back(value);
    } else {
      i = free_.back();
      free_.pop_back();
      nodes_[i] = value;
      if (!free_.empty()) core::prefetch(&nodes_[free_.back()]);
    }
    return i;
  }
  void release(std::uint32_t i) { free_.push_back(i); }
  /// The node add() will reuse next, or kNone: for prefetching.
  std::uint32_t next_free() const { return free_.empty() ? kNone : free_.back(); }

  Node& operator[](std::uint32_t i) { return nodes_[i]; }
  const Node& operator[](std::uint32_t i) const { return nodes_[i]; }

 private:
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> free_;  // freed nodes, the last freed on top
};

}  // namespace shoal::net
