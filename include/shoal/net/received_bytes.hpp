// The bytes received of the flows a rank counts (Network::counted_at), held
// only while a flow arrives: an open-addressing table of the flows that have
// begun and not ended on this rank, sized by how many arrive at once, and a
// bit per flow of the DAG for those that have ended.
//
// A count for every flow of the DAG (8 bytes each) was the same on every rank,
// whatever it received, so it never shrank with ranks. The flows in progress
// are few beside the DAG's, and their table stays in cache; the ended bits
// keep conservation exact: a cell of a flow that has ended is an Error, as an
// overcount was before.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/core/units.hpp"

namespace shoal::net {

class ReceivedBytes {
 public:
  /// For a DAG of `flows` flows.
  explicit ReceivedBytes(std::size_t flows) : ended_((flows + 63) / 64, 0) { rehash(kFirstSlots); }

  /// Counts `bytes` more of `flow` (of `total` bytes); true when that ends it.
  /// An Error ("conservation: ...") when the flow has ended or would exceed its total.
  [[gnu::always_inline]] bool add(std::uint32_t flow, Bytes bytes, Bytes total) {
    received_ += bytes;
    const std::uint32_t at = find(flow);
    Slot& slot = slots_[at];
    if (slot.key == kEmpty) return begin(at, flow, bytes, total);
    slot.bytes += bytes;  // in progress
    if (slot.bytes < total) return false;
    return end_in_table(at, total);
  }

  bool has_ended(std::uint32_t flow) const { return (ended_[flow / 64] >> (flow % 64) & 1) != 0; }
  /// What `flow` (of `total` bytes) has received on this rank.
  Bytes of(std::uint32_t flow, Bytes total) const {
    if (has_ended(flow)) return total;
    const Slot& slot = slots_[find(flow)];
    return slot.key == flow ? slot.bytes : 0;
  }
  /// Every byte counted on this rank.
  Bytes total() const { return received_; }
  /// Flows that have begun and not ended here.
  std::uint32_t in_progress() const { return live_; }
  /// Where add(flow) looks first: for prefetching.
  const void* home_address(std::uint32_t flow) const { return &slots_[home(flow)]; }

  /// For the memory estimate: the ended bits and a table for `in_progress`
  /// flows at once.
  static std::uint64_t estimate_bytes(std::uint64_t flows, std::uint64_t in_progress) {
    return (flows + 63) / 64 * 8 + std::bit_ceil(2 * in_progress + 1) * sizeof(Slot);
  }

 private:
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  static constexpr std::size_t kFirstSlots = 1024;
  struct Slot {
    std::uint32_t key = kEmpty;
    Bytes bytes = 0;
  };

  std::uint32_t home(std::uint32_t flow) const {
    // Fibonacci hashing: flows of one coflow are consecutive ids, spread apart.
    return static_cast<std::uint32_t>((std::uint64_t{flow} * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  /// The slot that holds `flow`, or the empty one where it would go.
  [[gnu::always_inline]] std::uint32_t find(std::uint32_t flow) const {
    std::uint32_t at = home(flow);
    while (slots_[at].key != flow && slots_[at].key != kEmpty) at = (at + 1) & mask_;
    return at;
  }
  /// The flow's first cell on this rank, at its free slot `at`.
  [[gnu::noinline]] bool begin(std::uint32_t at, std::uint32_t flow, Bytes bytes, Bytes total) {
    if (has_ended(flow) || bytes > total) [[unlikely]]
      overcount(flow, has_ended(flow) ? total + bytes : bytes, total);
    if (bytes == total) {  // a flow of one cell never takes a slot
      mark_ended(flow);
      return true;
    }
    slots_[at] = {flow, bytes};
    if (++live_ * 2 > slots_.size()) rehash(slots_.size() * 2);
    return false;
  }
  /// The flow at slot `at` has received at least `total`.
  [[gnu::noinline]] bool end_in_table(std::uint32_t at, Bytes total) {
    const Slot slot = slots_[at];
    if (slot.bytes > total) [[unlikely]]
      overcount(slot.key, slot.bytes, total);
    mark_ended(slot.key);
    erase(at);
    return true;
  }
  void mark_ended(std::uint32_t flow) { ended_[flow / 64] |= std::uint64_t{1} << (flow % 64); }
  /// Linear probing's deletion without tombstones: later slots of the run
  /// that could sit here move back.
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
  void rehash(std::size_t slots) {
    std::vector<Slot> old(slots);
    old.swap(slots_);
    mask_ = static_cast<std::uint32_t>(slots - 1);
    shift_ = 64 - std::countr_zero(slots);
    for (const Slot& s : old) {
      if (s.key != kEmpty) slots_[find(s.key)] = s;  // not there yet: its empty slot
    }
  }
  [[noreturn]] static void overcount(std::uint32_t flow, Bytes received, Bytes total) {
    throw Error("conservation: flow " + std::to_string(flow) + " received " +
                std::to_string(received) + " of " + std::to_string(total) + " bytes");
  }

  std::vector<Slot> slots_;
  std::uint32_t mask_ = 0;
  int shift_ = 64;
  std::uint32_t live_ = 0;
  Bytes received_ = 0;
  std::vector<std::uint64_t> ended_;  // a bit per flow
};

}  // namespace shoal::net
