// Which of a DAG's numbered items (flows, tasks) a rank holds, and each held
// one's place among them: a bit per item, and the held items before each 64
// (4 bytes per 64). A fragment keeps its items' ids while it stores only its
// own, in order; this finds an item's place in that storage without a map.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/core/prefetch.hpp"

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
  /// Numbers the next `count` items, none held: a word at a time.
  void add_unheld(std::size_t count) {
    while (count > 0) {
      const std::size_t step = std::min(count, 64 - size_ % 64);
      size_ += step;
      count -= step;
      if (size_ % 64 == 0) {
        bits_.push_back(0);
        before_.push_back(static_cast<std::uint32_t>(held_));
      }
    }
  }
  /// Items numbered, held or not.
  std::size_t size() const { return size_; }
  bool holds(std::uint32_t item) const { return (bits_[item >> 6] >> (item & 63) & 1) != 0; }
  /// The held items before `item` (its place among them if held); valid for
  /// item == size() too (the held count).
  std::size_t slot(std::uint32_t item) const {
    const std::uint64_t below = bits_[item >> 6] & ((std::uint64_t{1} << (item & 63)) - 1);
    return before_[item >> 6] + count_bits(below);
  }
  /// What holds() and slot() read, for a prefetch.
  void prefetch(std::uint32_t item) const {
    core::prefetch(&bits_[item >> 6]);
    core::prefetch(&before_[item >> 6]);
  }

 private:
  /// std::popcount, inline: on x86-64 without -mpopcnt (the default target)
  /// it is a call into libgcc, and a switch finds a flow this way at every hop.
  static std::size_t count_bits(std::uint64_t x) {
#if defined(__x86_64__) && !defined(__POPCNT__)
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return static_cast<std::size_t>((x * 0x0101010101010101ULL) >> 56);
#else
    return static_cast<std::size_t>(std::popcount(x));
#endif
  }

  std::vector<std::uint64_t> bits_;    // a word past the last item, so that slot(size()) works
  std::vector<std::uint32_t> before_;  // by word: the held items before it
  std::size_t size_ = 0;
  std::size_t held_ = 0;
};

}  // namespace shoal::work
