// Items of several flows waiting for one port, served one item per flow in
// turn (round robin). A flow that gets an item while it has none joins the
// back of the turn. Few flows share a port at once, so a flow's slot is found
// by scanning a short contiguous array of flow ids rather than through a map;
// slots are reused, so nothing is allocated once the queue has its working size.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "shoal/net/ring.hpp"

namespace shoal::net {

template <class Item>
class RoundRobinQueue {
 public:
  bool empty() const { return turn_.empty(); }
  /// Flows holding items.
  std::size_t flows() const { return turn_.size(); }
  const Item& front() const { return items_[turn_.front()].front(); }
  /// Items held, over all flows (a scan of the slots: for checks, not hot paths).
  std::size_t size() const {
    std::size_t n = 0;
    for (const Ring<Item>& items : items_) n += items.size();
    return n;
  }

  void push(std::uint32_t flow, const Item& item) {
    auto slot = std::find(flow_.begin(), flow_.end(), flow);
    if (slot == flow_.end()) {
      slot = std::find(flow_.begin(), flow_.end(), kFree);
      if (slot == flow_.end()) {
        flow_.push_back(kFree);
        items_.emplace_back();
        slot = flow_.end() - 1;
      }
      *slot = flow;
      turn_.push(static_cast<std::uint32_t>(slot - flow_.begin()));
    }
    items_[static_cast<std::size_t>(slot - flow_.begin())].push(item);
  }

  /// Removes the front item; its flow goes to the back of the turn if it has more.
  void pop() {
    const std::uint32_t slot = turn_.front();
    turn_.pop();
    items_[slot].pop();
    if (items_[slot].empty()) {
      flow_[slot] = kFree;
    } else {
      turn_.push(slot);
    }
  }

 private:
  static constexpr std::uint32_t kFree = ~std::uint32_t{0};
  std::vector<std::uint32_t> flow_;  // by slot: the flow whose items it holds, or kFree
  std::vector<Ring<Item>> items_;    // by slot
  Ring<std::uint32_t> turn_;         // slots holding items, in service order
};

}  // namespace shoal::net
