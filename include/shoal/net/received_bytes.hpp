// The bytes received of the flows a rank counts (Network::counted_at), held
// only while a flow arrives: an open-addressing table of the flows that have
// begun and not ended on this rank, sized by how many arrive at once, and a
// bit per flow the rank holds for those that have ended.
//
// A count for every flow of the DAG (8 bytes each) was the same on every rank,
// whatever it received, so it never shrank with ranks. The flows in progress
// are few beside the DAG's, and their table stays in cache; the ended bits
// keep conservation exact: a cell of a flow that has ended is an Error, as an
// overcount was before.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/core/units.hpp"
#include "shoal/net/flow_table.hpp"

namespace shoal::net {

class ReceivedBytes {
 public:
  /// A flow's place among those a rank holds (work::Dag::held_index): its
  /// ended bit. Asked only as a flow begins or ends, not for every cell.
  using PlaceOf = std::function<std::size_t(std::uint32_t flow)>;
  /// For `places` flows, each at `place_of(flow)` (empty: at its id). A bit
  /// for every flow of the DAG was the same on every rank.
  explicit ReceivedBytes(std::size_t places, PlaceOf place_of = {})
      : place_of_(std::move(place_of)), ended_((places + 63) / 64, 0) {}

  /// Counts `bytes` more of `flow` (of `total` bytes); true when that ends it.
  /// An Error ("conservation: ...") when the flow has ended or would exceed its total.
  [[gnu::always_inline]] bool add(std::uint32_t flow, Bytes bytes, Bytes total) {
    received_ += bytes;
    const std::uint32_t at = counts_.find(flow);
    Table::Slot& slot = counts_[at];
    if (slot.key == Table::kEmpty) return begin(at, flow, bytes, total);
    slot.value += bytes;  // in progress
    if (slot.value < total) return false;
    return end_in_table(at, total);
  }

  bool has_ended(std::uint32_t flow) const {
    const std::size_t at = place(flow);
    return (ended_[at / 64] >> (at % 64) & 1) != 0;
  }
  /// What `flow` (of `total` bytes) has received on this rank.
  Bytes of(std::uint32_t flow, Bytes total) const {
    if (has_ended(flow)) return total;
    const Table::Slot& slot = counts_[counts_.find(flow)];
    return slot.key == flow ? slot.value : 0;
  }
  /// Every byte counted on this rank.
  Bytes total() const { return received_; }
  /// Flows that have begun and not ended here.
  std::uint32_t in_progress() const { return counts_.size(); }
  /// Where add(flow) looks first: for prefetching.
  const void* home_address(std::uint32_t flow) const { return counts_.home_address(flow); }

  /// For the memory estimate: the ended bits of `places` flows and a table
  /// for `in_progress` flows at once.
  static std::uint64_t estimate_bytes(std::uint64_t places, std::uint64_t in_progress) {
    return (places + 63) / 64 * 8 + Table::bytes_for(in_progress);
  }

 private:
  using Table = FlowTable<Bytes>;
  static constexpr std::size_t kFirstSlots = 1024;

  /// The flow's first cell on this rank, at its free slot `at`.
  [[gnu::noinline]] bool begin(std::uint32_t at, std::uint32_t flow, Bytes bytes, Bytes total) {
    if (has_ended(flow) || bytes > total) [[unlikely]]
      overcount(flow, has_ended(flow) ? total + bytes : bytes, total);
    if (bytes == total) {  // a flow of one cell never takes a slot
      mark_ended(flow);
      return true;
    }
    counts_.insert(at, flow, bytes);
    return false;
  }
  /// The flow at slot `at` has received at least `total`.
  [[gnu::noinline]] bool end_in_table(std::uint32_t at, Bytes total) {
    const Table::Slot slot = counts_[at];
    if (slot.value > total) [[unlikely]]
      overcount(slot.key, slot.value, total);
    mark_ended(slot.key);
    counts_.erase(at);
    return true;
  }
  std::size_t place(std::uint32_t flow) const { return place_of_ ? place_of_(flow) : flow; }
  void mark_ended(std::uint32_t flow) {
    const std::size_t at = place(flow);
    ended_[at / 64] |= std::uint64_t{1} << (at % 64);
  }
  [[noreturn]] static void overcount(std::uint32_t flow, Bytes received, Bytes total) {
    throw Error("conservation: flow " + std::to_string(flow) + " received " +
                std::to_string(received) + " of " + std::to_string(total) + " bytes");
  }

  Table counts_{kFirstSlots};  // the flows in progress here
  Bytes received_ = 0;
  PlaceOf place_of_;
  std::vector<std::uint64_t> ended_;  // a bit per place
};

}  // namespace shoal::net
