// The GPUs' NICs: each NIC port's own flows with bytes left to send, ordered
// by key (strictly across keys, round-robin among the flows of one key), how
// the port numbers the events of its transmissions, and the bursts in which
// a port that nothing can overtake sends several cells from one event
// (NetworkOptions::nic_bursts).
//
// Numbering: a GPU's ports (up to three) number their events in streams of
// their own (core::Simulator::send_from). The events of a port's n-th
// transmission are 3n + e, e its TransmissionEvent, so they have the same keys
// whenever they are sent, which is what lets a burst send a port's next cells
// from one event. A switch's events are numbered by the switch as it sends them.
//
// What the Nic keeps of a flow it sends lives in a slot of its own, taken
// when the flow starts: a rank holds the flows its GPUs send, not every flow
// of the DAG.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "shoal/core/simulator.hpp"
#include "shoal/core/sparse_array.hpp"
#include "shoal/net/cell_head.hpp"
#include "shoal/net/event_codec.hpp"
#include "shoal/net/keyed_flows.hpp"
#include "shoal/net/ports.hpp"
#include "shoal/net/rank_share.hpp"
#include "shoal/net/router.hpp"
#include "shoal/net/transit_routes.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::net {

/// The events one transmission may send, in the order of their numbers.
enum class TransmissionEvent : std::uint64_t { kCellHead = 0, kCredit = 1, kPortFree = 2 };
inline constexpr std::uint64_t kEventsPerTransmission = 3;

/// Where a transmission's events are numbered: stream 0 is the sending node's
/// own sequence (a switch, a GPU's ports past its streams); else the port's
/// stream, from `first` on.
struct TransmissionNumbers {
  std::uint32_t stream = 0;
  std::uint64_t first = 0;
};

/// Sends an event of the transmission numbered `numbers`.
[[gnu::always_inline]] inline void send_numbered(core::Simulator& sim, TransmissionNumbers numbers,
                                                 TransmissionEvent event, topo::NodeId target,
                                                 Time delay, std::uint32_t tag,
                                                 std::uint64_t payload) {
  sim.send_maybe_from(numbers.stream, numbers.first + static_cast<std::uint64_t>(event), target,
                      delay, tag, payload);
}

/// A flow a NIC sends, by its slot there (Nic::start numbers them on each rank).
using SentFlow = std::uint32_t;

/// A cell of a NIC's own flow, chosen to go next.
struct OwnCell {
  work::FlowId flow;
  int cls = 0;
  Bytes bytes = 0;
};

class Nic {
 public:
  static constexpr std::size_t kMaxBurst = 16;

  /// `priorities` by coflow; with the starvation guard on, keys are shifted
  /// up by one (key 0 is for the flows it promotes). Numbers each GPU port's
  /// events and picks the ports that may burst (in `ports`' link states).
  /// `router`: which ports fail, and which GPUs relay. `sim`: which GPUs are
  /// this rank's (their flows get slots).
  Nic(const topo::Fabric& fabric, const work::Dag& dag, const core::Simulator& sim,
      const NetworkOptions& options, FlowPriorities priorities, Ports& ports, const Router& router);

  /// The numbers of a GPU port's transmission `n` (0-based): the one place
  /// the numbering is defined.
  TransmissionNumbers numbers_of(topo::LinkId link, std::uint64_t n) const {
    return {ports_.link(link).stream, kEventsPerTransmission * n};
  }
  /// The numbers of the next transmission on `link`, whose state is `state`
  /// (the node's own where not at a GPU).
  [[gnu::always_inline]] TransmissionNumbers take_numbers(topo::LinkId link,
                                                          const LinkState& state) {
    if (state.stream == 0) return {};
    return {state.stream, kEventsPerTransmission * port_flows_[link].transmissions++};
  }
  /// The numbers of the port's last transmission (its port-free event's).
  TransmissionNumbers last_numbers(topo::LinkId link) const {
    if (ports_.link(link).stream == 0) return {};
    return numbers_of(link, port_flows_[link].transmissions - 1);
  }

  /// Flow `flow` of `coflow` starts at the port of `link`, with all its
  /// bytes to send (behind a burst's cells, where one is on the wire); returns its slot.
  SentFlow start(topo::LinkId link, work::FlowId flow, work::CoflowId coflow, Bytes bytes,
                 const core::Simulator& sim);
  /// A flow moved to `link` from a failed port, with what it has left to send.
  void move(topo::LinkId link, SentFlow s, const core::Simulator& sim) {
    join(link, sent_[s].key, s, sim);
  }
  work::FlowId flow_of(SentFlow s) const { return work::FlowId{sent_[s].flow}; }
  /// The starvation guard: whether flow `s`, last served at `link` a while
  /// ago, is still waiting there at a key it can be promoted from; when it is
  /// promoted, key 0 puts it first.
  bool waiting(SentFlow s) const { return sent_[s].to_send > 0 && sent_[s].key != 0; }
  Time last_served(SentFlow s) const { return last_served_[s]; }
  void promote(topo::LinkId link, SentFlow s) {
    sent_[s].key = 0;
    port_flows_[link].flows.push(0, s);  // its old entry is skipped as stale
  }
  bool guarded() const { return guarded_; }

  /// The cell the port of `link` sends next from its own flows, in key order,
  /// round-robin within a key; a key whose front flow lacks credit lets the
  /// next key go. Takes it off its flow's bytes; false: none can go.
  [[gnu::always_inline]] bool next_cell(topo::LinkId link, Port& port, Bytes cell_size, Time now,
                                        OwnCell& out) {
    KeyedFlows& own = port_flows_[link].flows;
    for (std::size_t g = 0; g < own.groups();) {
      const SentFlow s = own.front(g);
      Sent& sent = sent_[s];
      if (sent.to_send == 0 || sent.key != own.key(g)) {
        own.pop(g);  // promoted away or done: a stale entry
        port.has_own = !own.empty();
        continue;
      }
      // A flow the starvation guard promoted goes in class 0 all the way.
      const int c = sent.key == 0 && guarded() ? 0 : static_cast<int>(sent.cls);
      const Bytes bytes = std::min(cell_size, static_cast<Bytes>(sent.to_send));
      if (port.credits[c] < bytes) {
        ++g;
        continue;
      }
      sent.to_send -= static_cast<std::uint64_t>(bytes);
      if (guarded()) last_served_[s] = now;
      if (sent.to_send > 0) {
        own.rotate(g);  // round robin among the flows of one key
      } else {
        own.pop(g);
        port.has_own = !own.empty();
      }
      out = {work::FlowId{sent.flow}, c, bytes};
      return true;
    }
    return false;
  }

  /// For a port that may burst (LinkState::burst): sends as many of its own
  /// cells as one event per cell would send before anything could change the
  /// port's choice, and the port-free event after the last; false: it sent
  /// none (the caller sends one cell as any port would).
  bool send_burst(topo::NodeId node, topo::LinkId link, Bytes cell_size, core::Simulator& sim);

  /// Removes the port's flows and gives each that has bytes left to `relocate`.
  template <class Relocate>
  void drain(topo::LinkId link, Relocate&& relocate) {
    KeyedFlows& own = port_flows_[link].flows;
    while (!own.empty()) {
      const SentFlow s = own.front(0);
      const bool live = sent_[s].to_send > 0 && sent_[s].key == own.key(0);
      own.pop(0);
      if (live) relocate(s);
    }
  }

  bool idle(topo::LinkId link) const { return port_flows_[link].flows.empty(); }
  std::size_t key_groups(topo::LinkId link) const { return port_flows_[link].flows.groups(); }

  /// For the engine's prefetch stages at a NIC port: its key groups, then the
  /// front flow, then what next_cell reads about that flow.
  const void* groups_address(topo::LinkId link) const {
    return port_flows_[link].flows.groups_address();
  }
  const void* front_address(topo::LinkId link) const {
    return port_flows_[link].flows.front_address();
  }
  void prefetch_front_flow(topo::LinkId link) const {
    const KeyedFlows& own = port_flows_[link].flows;
    if (own.empty()) return;
    core::prefetch(&sent_[own.front(0)]);
  }
  void prefetch_port(topo::LinkId link) const { core::prefetch(&port_flows_[link]); }

  /// Bytes the Nic takes per flow it sends (none for the instant network;
  /// more under the starvation guard), per link and per GPU of the rank (`share`).
  static constexpr std::uint64_t kBytesPerFlow = 16;
  static constexpr std::uint64_t kBytesPerGuardedFlow = kBytesPerFlow + sizeof(Time);
  static std::uint64_t estimate_bytes(const work::Dag& dag, const NetworkOptions& options,
                                      const RankShare& share);

 private:
  /// A NIC port's own flows, and how many transmissions it has numbered.
  struct PortFlows {
    KeyedFlows flows;
    std::uint64_t transmissions = 0;
  };
  /// The cells a NIC port last sent in a burst, kept to place a flow that
  /// joins its key while the burst is on the wire where one event per cell
  /// would have: behind the cells that, one at a time, would have been sent
  /// already.
  struct Burst {
    std::uint32_t key = 0;                // the key whose flows it served
    std::uint32_t count = 0;              // its transmissions
    std::uint64_t first = 0;              // its first transmission's number
    std::array<Time, kMaxBurst> start{};  // each transmission's start
    // The flows it rotated to the back of its key's turn, front to back: the
    // transmission (1-based) that served each last.
    std::uint32_t tail = 0;
    std::array<std::uint8_t, kMaxBurst> last{};
  };

  /// What the Nic keeps of a flow it sends, read together for each cell.
  struct Sent {
    std::uint32_t flow;          // the DAG's
    std::uint32_t key;           // NIC key (0: promoted by the guard)
    std::uint64_t to_send : 56;  // bytes not yet cut into cells
    std::uint64_t cls : 8;       // switch class
  };
  static_assert(sizeof(Sent) == kBytesPerFlow);

  /// A flow joins its port's key turn (behind a burst's cells, where one is on the wire).
  void join(topo::LinkId link, std::uint32_t key, SentFlow s, const core::Simulator& sim);
  /// A burst's cell of `flow` starting at `at` (a NIC's own: no credit
  /// upstream, never delivered on send); returns when it has left.
  Time start_cell(topo::LinkId link, int cls, work::FlowId flow, Bytes bytes, Time at,
                  TransmissionNumbers numbers, core::Simulator& sim);

  const topo::Fabric& fabric_;
  const work::Dag& dag_;
  Ports& ports_;
  // By link, constructed where this rank owns the link's source (the ports
  // it checks): at a GPU, its flows with bytes to send.
  core::SparseArray<PortFlows> port_flows_;
  std::vector<Burst> bursts_;               // by LinkState::burst
  std::vector<std::uint32_t> gpu_min_key_;  // by GPU: the lowest key of the flows it sends
  std::vector<std::uint32_t> coflow_key_;   // by held coflow: its flows' NIC key
  std::vector<std::uint8_t> coflow_class_;  // by held coflow: its flows' switch class
  bool guarded_ = false;                    // the starvation guard is on
  std::vector<Sent> sent_;                  // by slot: the flows started here
  std::vector<Time> last_served_;  // by slot, guarded: when its NIC last sent one of its cells
};

}  // namespace shoal::net
