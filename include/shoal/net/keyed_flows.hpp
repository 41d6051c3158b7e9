// A NIC's flows with bytes to send, grouped by priority key: groups are served
// strictly in key order (lowest first), the flows of one group in turn (round
// robin). Few keys are active at a NIC at once, so the groups are a short
// vector kept sorted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "shoal/net/ring.hpp"

namespace shoal::net {

class KeyedFlows {
 public:
  bool empty() const { return groups_.empty(); }
  std::size_t groups() const { return groups_.size(); }
  std::uint32_t key(std::size_t group) const { return groups_[group].key; }
  std::uint32_t front(std::size_t group) const { return groups_[group].flows.front(); }

  /// For prefetching, in two steps: the group array (this object in cache), then
  /// the first group's front flow (the group array in cache); null when empty.
  const void* groups_address() const { return groups_.data(); }
  const void* front_address() const {
    return groups_.empty() ? nullptr : &groups_.front().flows.front();
  }

  /// The flow joins the back of its key's turn.
  void push(std::uint32_t key, std::uint32_t flow) {
    auto it = std::lower_bound(groups_.begin(), groups_.end(), key,
                               [](const Group& g, std::uint32_t k) { return g.key < k; });
    if (it == groups_.end() || it->key != key) it = groups_.insert(it, Group{key, {}});
    it->flows.push(flow);
  }

  std::size_t group_size(std::size_t group) const { return groups_[group].flows.size(); }

  /// The flow joins its key's turn with `behind` flows after it (push: 0);
  /// the group must hold at least that many.
  void insert(std::uint32_t key, std::uint32_t flow, std::size_t behind) {
    push(key, flow);
    if (behind > 0) {
      auto it = std::lower_bound(groups_.begin(), groups_.end(), key,
                                 [](const Group& g, std::uint32_t k) { return g.key < k; });
      it->flows.move_back_forward(behind);
    }
  }

  /// Removes the group's front flow; the group goes when it is empty.
  void pop(std::size_t group) {
    groups_[group].flows.pop();
    if (groups_[group].flows.empty()) {
      groups_.erase(groups_.begin() + static_cast<std::ptrdiff_t>(group));
    }
  }

  /// The group's front flow goes to the back of its turn.
  void rotate(std::size_t group) {
    Ring<std::uint32_t>& flows = groups_[group].flows;
    const std::uint32_t f = flows.front();
    flows.pop();
    flows.push(f);
  }

 private:
  struct Group {
    std::uint32_t key;
    Ring<std::uint32_t> flows;
  };
  std::vector<Group> groups_;
};

}  // namespace shoal::net
