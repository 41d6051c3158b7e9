// The cells waiting at one rank's egress ports, per port and class, served
// round robin across flows (or FIFO, one lane per port class).
//
// Each (link, class, flow) with cells waiting has a lane: a FIFO of its cells.
// A port class keeps its lanes in a turn (service order); serving takes one cell
// from the front lane, which then goes to the back if it has more, so a flow
// that gets a cell while it has none joins the back of the turn.
//
// Why pools rather than containers per port: a port holding its own vectors
// costs a chain of dependent cache misses per cell (port, slot array, ring
// header, ring storage) and a kilobyte of mostly idle state. Here every lane
// and every cell lives in one of two flat pools with free lists, and a port
// class is two lane ids (its Turn, kept in the port's own cache line). A lane
// holds its front cell itself, so serving a port reads one node fewer, and a
// lane that never holds a second cell (most, where flows are many and their
// cells spread out) takes no cell node at all. pop() prefetches what the next
// service of that port class will read, so a busy port's next cell is usually
// in cache by the time its turn comes.
//
// How push() finds a flow's lane (LaneKeys):
// - FIFO: a port class has one lane, its turn's: no table at all.
// - By hop: where routes are fixed (ECMP, no failures, one class per flow), a
//   flow's cells that are h links into their path all wait at one port, so
//   (flow, hop) names the lane: a table of lane ids by flow and hop, read and
//   written in place, 4 bytes a slot: a hash's probes and deletions cost
//   cache misses on every cell-hop where flows are many. Hop 0 has no slot:
//   at its sender a flow's cells are the Nic's, never queued here.
// - Hashed: any routing (spraying, failures): an open-addressing hash of
//   (link, class, flow).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/core/prefetch.hpp"
#include "shoal/core/units.hpp"
#include "shoal/net/node_pool.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::net {

struct Cell {
  std::uint32_t flow;
  std::uint32_t bytes;
  topo::LinkId in_link;
  std::uint32_t hop;  // links it crossed before the one it waits for
  Time tail;          // when its tail arrives at the node it waits in
};

class PortQueues {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  /// A port class's lanes in service order (front = the next to serve).
  struct Turn {
    std::uint32_t front = kNone;
    std::uint32_t back = kNone;
    bool empty() const { return front == kNone; }
  };

  /// The most a waiting cell takes: a lane of its own, with its share of the
  /// hash (kept at most half full). For the memory estimate.
  static constexpr std::size_t kMaxBytesPerCell = 32 + 2 * 16;

  enum class LaneKeys : std::uint8_t { kFifo, kByHop, kHashed };
  /// One lane per port class (FIFO).
  static PortQueues fifo() { return PortQueues(LaneKeys::kFifo, 0, 0); }
  /// Round robin across flows, each flow's lane found by (flow, hop): every
  /// cell of a flow pushed with the same hop must wait at one port and class.
  /// `hops`: the links of the longest path (at least 2); fixed at `flows` x
  /// (hops - 1) slots (by_hop_bytes).
  static PortQueues by_hop(std::size_t flows, std::uint32_t hops) {
    return PortQueues(LaneKeys::kByHop, flows, hops);
  }
  static std::uint64_t by_hop_bytes(std::uint64_t flows, std::uint32_t hops) {
    return hops == 0 ? 0 : flows * (hops - 1) * sizeof(std::uint32_t);
  }
  /// Round robin across flows, each flow's lane found by a hash of (link, class, flow).
  static PortQueues hashed() { return PortQueues(LaneKeys::kHashed, 0, 0); }

  // Inline: the caller's cell then reaches its node from registers (see Network::enqueue).
  [[gnu::always_inline]] void push(Turn& turn, topo::LinkId link, int cls, const Cell& cell) {
    if (keys_ == LaneKeys::kFifo) {
      if (turn.empty()) {
        open_lane(turn, cell);
      } else {
        append(lanes_[turn.front], cell);
      }
      return;
    }
    if (keys_ == LaneKeys::kByHop) {
      std::uint32_t& lane = by_hop_[by_hop_slot(cell.flow, cell.hop)];
      if (lane != kNone) {  // the flow already waits here: behind its last cell
        append(lanes_[lane], cell);
      } else {
        lane = open_lane(turn, cell);
      }
      return;
    }
    const std::uint64_t key = make_key(link, cls, cell.flow);
    const std::size_t at = find_slot(key);
    if (table_[at].key == key) {
      append(lanes_[table_[at].lane], cell);
      return;
    }
    table_[at] = {key, open_lane(turn, cell)};
    if (live_lanes_ * 2 > table_.size()) rehash(table_.size() * 2);
  }

  /// The next cell to serve; the turn must not be empty.
  Cell front(const Turn& turn) const {
    const Lane& lane = lanes_[turn.front];
    return {lane.cell_flow, lane.bytes, lane.in_link, lane.hop, lane.tail};
  }

  /// Removes the front cell; its lane goes to the back of the turn if it has more.
  [[gnu::always_inline]] void pop(Turn& turn, topo::LinkId link, int cls) {
    const std::uint32_t l = turn.front;
    Lane& lane = lanes_[l];
    if (lane.rest_front == kNone) {
      if (keys_ == LaneKeys::kByHop) {
        by_hop_[by_hop_slot(lane.cell_flow, lane.hop)] = kNone;
      } else if (keys_ == LaneKeys::kHashed) {
        erase(make_key(link, cls, lane.cell_flow));
      }
      turn.front = lane.next;
      if (turn.front == kNone) turn.back = kNone;
      lanes_.release(l);
      --live_lanes_;
    } else {
      // Its next cell moves into the lane (fetched when the lane was served
      // last, or by the engine's stages).
      const std::uint32_t c = lane.rest_front;
      const CellNode& n = cells_[c];
      lane.tail = n.tail;
      lane.cell_flow = n.flow;
      lane.bytes = n.bytes;
      lane.in_link = n.in_link;
      lane.hop = n.hop;
      lane.rest_front = n.next;
      if (n.next == kNone) {
        lane.rest_back = kNone;
      } else {
        core::prefetch(&cells_[n.next]);  // read when this lane's turn comes again
      }
      cells_.release(c);
      if (turn.back != l) {
        turn.front = lane.next;
        lanes_[turn.back].next = l;
        lane.next = kNone;
        turn.back = l;
      }
    }
    if (turn.front != kNone) core::prefetch(&lanes_[turn.front]);
  }

  /// Fetches where push() will look for the lane of a cell of `flow`, `hop`
  /// links into its path, at (link, class).
  void prefetch_slot(topo::LinkId link, int cls, std::uint32_t flow, std::uint32_t hop) const {
    if (keys_ == LaneKeys::kByHop) {
      core::prefetch(&by_hop_[by_hop_slot(flow, hop)]);
    } else if (keys_ == LaneKeys::kHashed) {
      prefetch_probe(home(make_key(link, cls, flow)));
    }
  }
  const void* front_address(const Turn& turn) const { return &lanes_[turn.front]; }
  /// Once prefetch_slot() has fetched it: fetches the lane push() will append
  /// to (when it sits in its home slot) and the node it will take, a cell's
  /// behind that lane's or else a new lane's.
  void prefetch_push(const Turn& turn, topo::LinkId link, int cls, std::uint32_t flow,
                     std::uint32_t hop) const {
    std::uint32_t lane = kNone;
    if (keys_ == LaneKeys::kFifo) {
      lane = turn.front;
    } else if (keys_ == LaneKeys::kByHop) {
      lane = by_hop_[by_hop_slot(flow, hop)];
    } else {
      const std::uint64_t key = make_key(link, cls, flow);
      const HashEntry& slot = table_[home(key)];
      if (slot.key == key) lane = slot.lane;
    }
    if (lane != kNone) {
      core::prefetch(&lanes_[lane]);
      if (cells_.next_free() != kNone) core::prefetch(&cells_[cells_.next_free()]);
    } else if (lanes_.next_free() != kNone) {
      core::prefetch(&lanes_[lanes_.next_free()]);
    }
  }
  /// Once front_address() is in cache: fetches what pop() will read next, the
  /// lane's second cell or, when the lane holds one, where it is forgotten.
  void prefetch_front(const Turn& turn, topo::LinkId link, int cls) const {
    const Lane& lane = lanes_[turn.front];
    if (lane.rest_front != kNone) {
      core::prefetch(&cells_[lane.rest_front]);
    } else if (keys_ == LaneKeys::kByHop) {
      core::prefetch(&by_hop_[by_hop_slot(lane.cell_flow, lane.hop)]);
    } else if (keys_ == LaneKeys::kHashed) {
      prefetch_probe(home(make_key(link, cls, lane.cell_flow)));
    }
  }
  /// Once front_address() is in cache: the link the front cell came in by.
  topo::LinkId front_in_link(const Turn& turn) const { return lanes_[turn.front].in_link; }

  /// Once front_address() is in cache: the flow of the front cell.
  std::uint32_t front_flow(const Turn& turn) const { return lanes_[turn.front].cell_flow; }

  /// Cells waiting in a port class (walks its lanes: for checks, not hot paths).
  std::size_t count(const Turn& turn) const {
    std::size_t n = 0;
    for (std::uint32_t l = turn.front; l != kNone; l = lanes_[l].next) {
      ++n;  // the lane's own
      for (std::uint32_t c = lanes_[l].rest_front; c != kNone; c = cells_[c].next) ++n;
    }
    return n;
  }
  /// Lanes in a port class (flows waiting there, in round-robin mode).
  std::size_t lanes(const Turn& turn) const {
    std::size_t n = 0;
    for (std::uint32_t l = turn.front; l != kNone; l = lanes_[l].next) ++n;
    return n;
  }
  std::size_t live_lanes() const { return live_lanes_; }

  /// Whether push() would find each lane of a port class again (walks its
  /// lanes: for checks, not hot paths): in round robin, every cell of a lane
  /// is of its flow (and, by hop, of its hop), and the lane is the one its
  /// key names; in FIFO, the turn holds one lane. (By hop, a flow's cell
  /// pushed at a second port on one hop joins the first port's lane and
  /// leaves the second port's turn empty: Network::check_ports sees that.)
  bool lanes_found_again(const Turn& turn, topo::LinkId link, int cls) const {
    if (keys_ == LaneKeys::kFifo) return turn.empty() || turn.front == turn.back;
    for (std::uint32_t l = turn.front; l != kNone; l = lanes_[l].next) {
      const Lane& lane = lanes_[l];
      for (std::uint32_t c = lane.rest_front; c != kNone; c = cells_[c].next) {
        if (cells_[c].flow != lane.cell_flow) return false;
        if (keys_ == LaneKeys::kByHop && cells_[c].hop != lane.hop) return false;
      }
      if (keys_ == LaneKeys::kByHop) {
        if (lane.hop == 0 || lane.hop >= hops_ ||
            by_hop_[by_hop_slot(lane.cell_flow, lane.hop)] != l) {
          return false;
        }
        continue;
      }
      const std::uint64_t key = make_key(link, cls, lane.cell_flow);
      const std::size_t at = find_slot(key);
      if (table_[at].key != key || table_[at].lane != l) return false;
    }
    return true;
  }

 private:
  static constexpr std::uint64_t kEmptyKey = ~std::uint64_t{0};  // never a real key: link < 2^28

  PortQueues(LaneKeys keys, std::size_t flows, std::uint32_t hops) : keys_(keys), hops_(hops) {
    if (keys == LaneKeys::kHashed) rehash(1024);
    if (keys == LaneKeys::kByHop) by_hop_.assign(flows * (hops - 1), kNone);
  }

  /// A flow's cells at one port class: the first held here, the rest in a
  /// list of cell nodes. 32 bytes, two to a cache line. A cell's size (at
  /// most 2^24) and hop (at most kMaxHops) share a word.
  struct Lane {
    Time tail;                 // the first cell's
    std::uint32_t cell_flow;   // the first cell's flow (in round robin, the lane's)
    std::uint32_t bytes : 25;  // the first cell's
    std::uint32_t hop : 7;     // the first cell's
    topo::LinkId in_link;      // the first cell's
    std::uint32_t rest_front;  // the lane's other cells, first and last, or kNone
    std::uint32_t rest_back;
    std::uint32_t next;  // the next lane in the turn, or on the free list
  };
  static_assert(sizeof(Lane) == 32);
  struct CellNode {
    Time tail;
    std::uint32_t flow;
    std::uint32_t bytes : 25;
    std::uint32_t hop : 7;
    topo::LinkId in_link;
    std::uint32_t next;  // the next cell of the lane, or on the free list
  };

  /// A new lane holding `cell`, at the back of `turn`. It holds its first
  /// cell itself: where flows are many, most lanes never hold another, so
  /// most cells take no node.
  [[gnu::always_inline]] std::uint32_t open_lane(Turn& turn, const Cell& cell) {
    const std::uint32_t l =
        lanes_.add({cell.tail, cell.flow, cell.bytes, cell.hop, cell.in_link, kNone, kNone, kNone});
    if (turn.empty()) {
      turn.front = l;
    } else {
      lanes_[turn.back].next = l;
    }
    turn.back = l;
    ++live_lanes_;
    return l;
  }
  /// `cell` behind the last cell of `lane`.
  [[gnu::always_inline]] void append(Lane& lane, const Cell& cell) {
    const std::uint32_t c =
        cells_.add({cell.tail, cell.flow, cell.bytes, cell.hop, cell.in_link, kNone});
    if (lane.rest_front == kNone) {
      lane.rest_front = c;
    } else {
      cells_[lane.rest_back].next = c;
    }
    lane.rest_back = c;
  }
  /// Hops 1 to hops_ - 1 (a cell pushed here crossed at least its first link).
  std::size_t by_hop_slot(std::uint32_t flow, std::uint32_t hop) const {
    if (hop - 1 >= hops_ - 1) [[unlikely]]
      too_many_hops(flow, hop);
    return std::size_t{flow} * (hops_ - 1) + (hop - 1);
  }
  [[noreturn, gnu::noinline, gnu::cold]] void too_many_hops(std::uint32_t flow,
                                                            std::uint32_t hop) const {
    throw Error("internal: a cell of flow " + std::to_string(flow) + " waits " +
                std::to_string(hop) + " links into its path, outside the 1 to " +
                std::to_string(hops_ - 1) + " its lanes were laid out for");
  }
  /// An entry of the hash of (link, class, flow) to lanes.
  struct HashEntry {
    std::uint64_t key = kEmptyKey;
    std::uint32_t lane = kNone;
  };
  static_assert(sizeof(Lane) + 2 * sizeof(HashEntry) <= kMaxBytesPerCell);

  static std::uint64_t make_key(topo::LinkId link, int cls, std::uint32_t flow) {
    return (std::uint64_t{flow} << 32) | (std::uint64_t{link} << 3) | static_cast<unsigned>(cls);
  }
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  /// The slot holding `key`, or the empty one where a probe for it stops.
  std::size_t find_slot(std::uint64_t key) const {
    std::size_t at = home(key);
    while (table_[at].key != key && table_[at].key != kEmptyKey) at = (at + 1) & mask_;
    return at;
  }
  /// A probe from `at` reads on until it meets an empty slot (erase() always
  /// does): fetch the slots after it too, often on the next line.
  void prefetch_probe(std::size_t at) const {
    core::prefetch(&table_[at]);
    core::prefetch(&table_[(at + 3) & mask_]);
  }

  /// Linear probing with backward-shift deletion: no tombstones, so probe
  /// lengths stay short however many lanes come and go.
  void erase(std::uint64_t key) {
    std::size_t at = home(key);
    while (table_[at].key != key) at = (at + 1) & mask_;
    std::size_t next = (at + 1) & mask_;
    while (table_[next].key != kEmptyKey) {
      const std::size_t want = home(table_[next].key);
      // Move `next` into the hole unless its home lies cyclically in (at, next].
      if (((next - want) & mask_) >= ((next - at) & mask_)) {
        table_[at] = table_[next];
        at = next;
      }
      next = (next + 1) & mask_;
    }
    table_[at] = HashEntry{};
  }

  void rehash(std::size_t capacity) {
    std::vector<HashEntry> old(capacity);
    old.swap(table_);
    mask_ = capacity - 1;
    shift_ = 64 - std::countr_zero(capacity);
    for (const HashEntry& s : old) {
      if (s.key == kEmptyKey) continue;
      std::size_t at = home(s.key);
      while (table_[at].key != kEmptyKey) at = (at + 1) & mask_;
      table_[at] = s;
    }
  }

  LaneKeys keys_;
  std::uint32_t hops_ = 0;
  std::vector<std::uint32_t> by_hop_;  // LaneKeys::kByHop: lane ids by flow * (hops_ - 1) + hop - 1
  std::vector<HashEntry> table_;       // LaneKeys::kHashed
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t live_lanes_ = 0;
  NodePool<Lane> lanes_;
  NodePool<CellNode> cells_;
};

}  // namespace shoal::net
