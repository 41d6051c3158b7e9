// Every directed link's egress port at its source node, and what a cell-hop
// reads about the link itself: the cells waiting (PortQueues), 8 class queues
// served in strict priority, credit-based lossless flow control per class
// towards the next node's ingress buffer, the time the wire is busy until,
// and the link's rate, latency and perturbation.
//
// Credits return over the link with its latency, by an event or, where that
// event could not change what the port does before it arrives, at once
// (credit_early; NetworkOptions::early_credits).
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/core/prefetch.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/core/sparse_array.hpp"
#include "shoal/core/units.hpp"
#include "shoal/net/cell_head.hpp"
#include "shoal/net/link_meters.hpp"
#include "shoal/net/network_options.hpp"
#include "shoal/net/port_queues.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::net {

/// One directed link's egress port: two cache lines, the first read by every
/// credit and transmission, the second by queueing. `busy_until` is when the
/// cell on the wire has left; a port-free event is scheduled only when cells
/// wait for that moment, so an idle pipeline costs no event per cell. A NIC
/// port's own flows are kept by the Nic.
struct alignas(64) Port {
  Time busy_until = 0;
  Time fail_at = kTimeInfinity;  // the link is down from then on
  std::array<std::int32_t, kClasses> credits{};
  bool free_pending = false;  // a port-free event is scheduled
  bool relay_turn = false;    // at a GPU: relayed cells go before its own flows next
  bool has_own = false;       // at a GPU: the Nic holds flows with bytes to send here
  std::uint8_t queued = 0;    // bit c: class c has cells queued here
  // Credit added early (NetworkOptions::early_credits), all classes together,
  // that may not have arrived yet; all of it has after early_until.
  std::int32_t early_bytes = 0;
  Time early_until = 0;
  std::array<PortQueues::Turn, kClasses> turns;  // the cells waiting, by class
};
static_assert(sizeof(Port) == 128);
static_assert(offsetof(Port, early_until) + sizeof(Time) <= 64, "what a credit reads: one line");

/// What a cell-hop reads about a link, in one cache line (rather than the
/// fabric's Link, the perturbations, the credit pace and the owner map: five
/// misses per link).
struct alignas(64) LinkState {
  topo::NodeId from = 0;
  topo::NodeId to = 0;
  Time latency = 0;
  Time perturbed_at = kTimeInfinity;  // slower or longer for cells starting from then
  Time extra_latency = 0;             // ... added to its latency then
  Time cell_time = 0;                 // a full cell's serialization before perturbed_at
  Time perturbed_cell_time = 0;       // ... and from then on
  double credit_pace = 0;             // the most bytes per ps its port can send
  bool source_here = false;           // this rank owns `from`
  // Into a GPU, from its NVSwitch or from the one switch it hangs off: a cell
  // sent here for that GPU is counted when it is sent (Network::delivered).
  bool delivers = false;
  std::uint8_t stream = 0;         // from a GPU: the stream its events are numbered in (Nic)
  std::uint32_t burst = kNoBurst;  // a NIC port that may burst: its Nic burst record
  static constexpr std::uint32_t kNoBurst = ~std::uint32_t{0};
};
static_assert(sizeof(LinkState) == 64);

class Ports {
 public:
  Ports(const topo::Fabric& fabric, const work::Dag& dag, const core::Simulator& sim,
        const NetworkOptions& options, std::span<const LinkPerturbation> perturbations);

  Port& operator[](topo::LinkId link) { return ports_[link]; }
  const Port& operator[](topo::LinkId link) const { return ports_[link]; }
  /// A link's state: only of a link to or from a node this rank owns.
  const LinkState& link(topo::LinkId l) const {
    assert(holds_link(l));
    return links_[l];
  }
  LinkState& link(topo::LinkId l) {
    assert(holds_link(l));
    return links_[l];
  }
  /// Whether it keeps the state of link `l`: a link to or from one of its nodes.
  bool holds_link(topo::LinkId l) const {
    const topo::Link& link = fabric_.link(l);
    return sim_.owns(link.from) || sim_.owns(link.to);
  }
  /// By link, the cells queued at its port: what adaptive spraying reads (kept only then).
  const std::vector<std::int32_t>& queued_cells() const { return queued_cells_; }
  LinkMeters& meters() { return meters_; }
  const PortQueues& queues() const { return queues_; }

  bool perturbed(topo::LinkId l, Time t) const { return t >= links_[l].perturbed_at; }
  BitsPerSecond rate(topo::LinkId l, bool perturbed) const {
    return perturbed ? perturbed_rate_[l] : fabric_.link(l).rate;
  }
  /// A cell's serialization time on `l`; a full cell's is kept per link.
  Time serialization(topo::LinkId l, Bytes bytes, bool perturbed) const {
    if (bytes == cell_size_) return perturbed ? links_[l].perturbed_cell_time : links_[l].cell_time;
    return transmit_time(bytes, rate(l, perturbed));
  }
  Time latency(topo::LinkId l, bool perturbed) const {
    return links_[l].latency + (perturbed ? links_[l].extra_latency : 0);
  }

  /// The port sends `bytes` in class `cls` from `start` for `serialize`: busy,
  /// counted, its credit spent.
  [[gnu::always_inline]] void occupy(topo::LinkId link, int cls, Bytes bytes, Time start,
                                     Time serialize) {
    Port& port = ports_[link];
    port.busy_until = start + serialize;
    if (recording_) meters_.count(link, cls, bytes, start, serialize);
    port.credits[cls] -= static_cast<std::int32_t>(bytes);
    if (port.credits[cls] < 0) [[unlikely]] {
      invariant_violated(sim_.now(), "link " + std::to_string(link) + " class " +
                                         std::to_string(cls) + " sent a cell without credit");
    }
  }

  // Inline, so that a cell built by the caller reaches its pool node from
  // registers (core/event_buffer.hpp says why a copy through memory costs).
  [[gnu::always_inline]] void enqueue(topo::LinkId out, int cls, const Cell& cell) {
    Port& port = ports_[out];
    if (count_queued_) ++queued_cells_[out];
    port.queued |= static_cast<std::uint8_t>(1u << cls);
    queues_.push(port.turns[static_cast<std::size_t>(cls)], out, cls, cell);
  }
  /// The cell class `cls` serves next, taken off the queue if the port has
  /// credit for it; false otherwise (it stays).
  [[gnu::always_inline]] bool dequeue_if_credit(topo::LinkId link, int cls, Cell& cell) {
    Port& port = ports_[link];
    PortQueues::Turn& turn = port.turns[static_cast<std::size_t>(cls)];
    cell = queues_.front(turn);
    if (port.credits[cls] < static_cast<std::int32_t>(cell.bytes)) return false;
    pop(link, cls);
    return true;
  }
  /// Removes the front cell of a class that has one.
  [[gnu::always_inline]] void pop(topo::LinkId link, int cls) {
    Port& port = ports_[link];
    PortQueues::Turn& turn = port.turns[static_cast<std::size_t>(cls)];
    queues_.pop(turn, link, cls);
    if (turn.empty()) port.queued &= static_cast<std::uint8_t>(~(1u << cls));
    if (count_queued_) --queued_cells_[link];
  }
  Cell front(topo::LinkId link, int cls) const {
    return queues_.front(ports_[link].turns[static_cast<std::size_t>(cls)]);
  }

  /// Credit back at `link`'s port, checked against its buffer.
  [[gnu::always_inline]] void add_credit(topo::LinkId link, int cls, Bytes bytes) {
    std::int32_t& credits = ports_[link].credits[static_cast<std::size_t>(cls)];
    credits += static_cast<std::int32_t>(bytes);
    if (credits > buffer_per_class_) [[unlikely]] {
      invariant_violated(sim_.now(), "link " + std::to_string(link) + " class " +
                                         std::to_string(cls) + " got credit beyond its buffer (" +
                                         std::to_string(credits) + " bytes)");
    }
  }

  /// Adds a credit arriving over `in_link` at `arrival` at once where its
  /// event could not change what the port does from `from` on (a time at or
  /// before the port's node's next event); false: it must be an event.
  [[gnu::always_inline]] bool credit_early(topo::LinkId in_link, int cls, Bytes bytes, Time arrival,
                                           Time from) {
    const LinkState& state = links_[in_link];
    if (!early_credits_ || !state.source_here) return false;
    // Until the credit arrives, the port's choices only compare a class's
    // credit with a cell (at most cell_size). If it keeps a cell's worth
    // without this credit and without any other added early, whatever it
    // sends meanwhile (at most delay * pace, the serialization times rounded
    // up, plus the cell starting last), the credit's event would find nothing
    // to do: add it now. Credits only grow otherwise, and the event's time and
    // key leave no trace (the sender's later keys keep their order), so the
    // run is the same. A port with a failure ahead keeps its events: one of
    // them may be what evacuates it. "Meanwhile" starts at `from`, a time at or
    // before the port's node's next event (in atom order that node may be
    // behind the one handling this event: Simulator::floor).
    Port& port = ports_[in_link];
    if (from > port.early_until) port.early_bytes = 0;  // all of it has arrived
    const double need = static_cast<double>(arrival - from) * state.credit_pace +
                        2.0 * static_cast<double>(cell_size_) + 64.0;
    if (port.fail_at != kTimeInfinity || arrival >= sim_.end_time() ||
        static_cast<double>(port.credits[cls] - port.early_bytes) < need) {
      return false;
    }
    add_credit(in_link, cls, bytes);
    port.early_bytes += static_cast<std::int32_t>(bytes);
    port.early_until = std::max(port.early_until, arrival);
    return true;
  }

  /// What sending a cell on `link` reads: both lines of its port, its link
  /// state and, when recording, its counters.
  void prefetch_sender(topo::LinkId link) const {
    const char* port = reinterpret_cast<const char*>(&ports_[link]);
    core::prefetch(port);
    core::prefetch(port + 64);
    core::prefetch(&links_[link]);
    if (recording_) meters_.prefetch(link);
  }
  /// What returning a credit over `link` reads: its port's first line and its link state.
  void prefetch_credit_return(topo::LinkId link) const {
    core::prefetch(&ports_[link]);
    core::prefetch(&links_[link]);
  }
  /// For the engine's prefetch stages: the lane a port serves next, then what it holds.
  const void* front_address(const PortQueues::Turn& turn) const {
    return queues_.front_address(turn);
  }
  void prefetch_front(const PortQueues::Turn& turn, topo::LinkId link, int cls) const {
    queues_.prefetch_front(turn, link, cls);
  }
  void prefetch_slot(topo::LinkId out, int cls, std::uint32_t flow, std::uint32_t hop) const {
    queues_.prefetch_slot(out, cls, flow, hop);
  }
  void prefetch_push(topo::LinkId out, int cls, std::uint32_t flow, std::uint32_t hop) const {
    queues_.prefetch_push(ports_[out].turns[static_cast<std::size_t>(cls)], out, cls, flow, hop);
  }

  /// The full invariants of one port (NetworkOptions::check): its queued-class
  /// bits, lanes and credits agree with its queues; returns the cells queued.
  std::int64_t check(topo::LinkId link) const;
  /// At the end of a complete run: the port holds no cell and has all its credit back.
  void check_drained(topo::LinkId link) const;

  /// By link, when it fails (kTimeInfinity: never), from the perturbations.
  static std::vector<Time> failure_times(const topo::Fabric& fabric,
                                         std::span<const LinkPerturbation> perturbations);
  /// How the queues find a flow's lane: by (flow, hop) where every flow's
  /// route is fixed for the whole run (NetworkOptions::lanes_by_hop) and the
  /// table for `flows` flows is small enough, a route being at most this many
  /// links; 0: by hash.
  static std::uint32_t lane_hops(const topo::Fabric& fabric, const NetworkOptions& options,
                                 std::span<const LinkPerturbation> perturbations,
                                 std::size_t flows);
  /// Bytes one rank's ports take for this fabric and DAG: a link's state for
  /// every link, and for each of the `links_here` it sends on its port and
  /// the cells in flight that the credits allow.
  static std::uint64_t estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                      const NetworkOptions& options, std::uint64_t links_here);

 private:
  static PortQueues make_queues(const topo::Fabric& fabric, const work::Dag& dag,
                                const NetworkOptions& options,
                                std::span<const LinkPerturbation> perturbations);

  const topo::Fabric& fabric_;
  const core::Simulator& sim_;
  Bytes cell_size_;
  Bytes buffer_per_class_;
  bool early_credits_;
  bool recording_;
  bool count_queued_;  // adaptive spraying reads queued_cells_
  // By link, constructed only where this rank owns the link's source: the
  // only ports it uses.
  core::SparseArray<Port> ports_;
  PortQueues queues_;  // the cells waiting at ports_
  // By link, constructed where this rank owns either end: every link whose
  // cells it sends or receives.
  core::SparseArray<LinkState> links_;
  std::vector<BitsPerSecond> perturbed_rate_;  // by link: its rate once perturbed
  std::vector<std::int32_t> queued_cells_;     // by link, where count_queued_
  LinkMeters meters_;
};

}  // namespace shoal::net
