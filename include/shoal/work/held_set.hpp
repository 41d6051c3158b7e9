// Which of a DAG's numbered items (flows, tasks) a rank holds, and each held
// one's place among them: a bit per item, and the held items before each 64
// (4 bytes per 64). A fragment keeps its items' ids while it stores only its
// own, in order; this finds an item's place in that storage without a map.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "shoal/core/error.hpp"

namespace shoal::work {

class HeldSet {
 public:
  HeldSet() { clear(); }

  void clear() {
    bits_.assign(1, 0);
    before_.assign(1, 0);
    size_ = 0;
    held_ = 0;
  }
  /// Numbers the next item, held or not.
  void add(bool held) {
    if (held) {
      bits_.back() |= std::uint64_t{1} << (size_ % 64);
      if (++held_ > UINT32_MAX) throw Error("internal: more than 2^32 items held");
    }
    if (++size_ % 64 == 0) {
      bits_.push_back(0);
      before_.push_back(static_cast<std::uint32_t>(held_));
    }
  }
  /// Items numbered, held or not.
  std::size_t size() const { return size_; }
  bool holds(std::uint32_t item) const { return (bits_[item >> 6] >> (item & 63) & 1) != 0; }
  /// The held items before `item` (its place among them if held); valid for
  /// item == size() too (the held count).
  std::size_t slot(std::uint32_t item) const {
    const std::uint64_t below = bits_[item >> 6] & ((std::uint64_t{1} << (item & 63)) - 1);
    return before_[item >> 6] + static_cast<std::size_t>(std::popcount(below));
  }

 private:
  std::vector<std::uint64_t> bits_;    // a word past the last item, so that slot(size()) works
  std::vector<std::uint32_t> before_;  // by word: the held items before it
  std::size_t size_ = 0;
  std::size_t held_ = 0;
};

}  // namespace shoal::work
