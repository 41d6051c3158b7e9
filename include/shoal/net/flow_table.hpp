// A small table by flow id of what a rank keeps about the few flows active on
// it at once (ReceivedBytes, TransitRoutes): open addressing with linear
// probing, at most half full, and deletion without tombstones. A vector by flow
// would hold an entry for every flow of the DAG on every rank; this holds the
// flows in progress, and stays in cache.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace shoal::net {

template <class Value>
class FlowTable {
 public:
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  struct Slot {
    std::uint32_t key = kEmpty;
    Value value{};
  };

  /// `slots`: a power of two.
  explicit FlowTable(std::size_t slots) { rehash(slots); }

  /// The slot that holds `flow`, or the empty one where it would go.
  [[gnu::always_inline]] std::uint32_t find(std::uint32_t flow) const {
    std::uint32_t at = home(flow);
    while (slots_[at].key != flow && slots_[at].key != kEmpty) at = (at + 1) & mask_;
    return at;
  }
  Slot& operator[](std::uint32_t at) { return slots_[at]; }
  const Slot& operator[](std::uint32_t at) const { return slots_[at]; }
  /// Puts `flow` in the empty slot `at` that find() gave (then any slot may move).
  void insert(std::uint32_t at, std::uint32_t flow, Value value) {
    slots_[at] = {flow, value};
    if (++live_ * 2 > slots_.size()) rehash(slots_.size() * 2);
  }
  /// Linear probing's deletion without tombstones: later slots of the run
  /// that could sit at `at` move back.
  void erase(std::uint32_t at) {
    --live_;
    std::uint32_t hole = at;
    for (std::uint32_t next = (hole + 1) & mask_; slots_[next].key != kEmpty;
         next = (next + 1) & mask_) {
      const std::uint32_t want = home(slots_[next].key);
      // It may fill the hole unless its home lies (cyclically) after the hole.
      if (((next - want) & mask_) >= ((next - hole) & mask_)) {
        slots_[hole] = slots_[next];
        hole = next;
      }
    }
    slots_[hole] = Slot{};
  }
  /// Flows in the table.
  std::uint32_t size() const { return live_; }
  /// Where find(flow) looks first: for prefetching.
  const void* home_address(std::uint32_t flow) const { return &slots_[home(flow)]; }
  /// The table's bytes with `flows` in it at once.
  static std::uint64_t bytes_for(std::uint64_t flows) {
    return std::bit_ceil(2 * flows + 1) * sizeof(Slot);
  }

 private:
  std::uint32_t home(std::uint32_t flow) const {
    // Fibonacci hashing: flows of one coflow are consecutive ids, spread apart.
    return static_cast<std::uint32_t>((std::uint64_t{flow} * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void rehash(std::size_t slots) {
    std::vector<Slot> old(slots);
    old.swap(slots_);
    mask_ = static_cast<std::uint32_t>(slots - 1);
    shift_ = 64 - std::countr_zero(slots);
    for (const Slot& s : old) {
      if (s.key != kEmpty) slots_[find(s.key)] = s;  // not there yet: its empty slot
    }
  }

  std::vector<Slot> slots_;
  std::uint32_t mask_ = 0;
  int shift_ = 64;
  std::uint32_t live_ = 0;
};

}  // namespace shoal::net
