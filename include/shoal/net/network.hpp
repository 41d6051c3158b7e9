// The packet-level network: flows cut into cells that cross the fabric's
// links, from the NIC that starts them (net/nic.hpp) through ports with class
// queues and credits (net/ports.hpp) to the receiver, which acknowledges each
// whole flow. What runs on it (exec/, the workload DAG) starts flows with
// start_flow() and hears of their completion through FlowEvents.
//
// Entities are the fabric's nodes; the events are NetEvent (event_codec.hpp).
// Forwarding is cut-through: a cell may start on the next link once its head
// has arrived, and never finishes there before its tail has arrived (it then
// starts late enough to end with its tail), so downstream its tail always
// follows its head by its serialization time on the last link. Store-and-
// forward is an option. Nothing is ever dropped.
//
// Three optimisations leave the run exactly as it would be without them (each
// has an option to turn it off, for the tests that prove it): credits added
// early (Ports::credit_early), cells counted as they are sent on a link that
// delivers (delivered()), and NIC bursts (Nic::send_burst).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shoal/core/simulator.hpp"
#include "shoal/net/cell_head.hpp"
#include "shoal/net/event_codec.hpp"
#include "shoal/net/network_options.hpp"
#include "shoal/net/nic.hpp"
#include "shoal/net/ports.hpp"
#include "shoal/net/rank_share.hpp"
#include "shoal/net/received_bytes.hpp"
#include "shoal/net/router.hpp"
#include "shoal/net/transit_routes.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::net {

/// What the network tells the model that runs on it, once per flow (never per cell).
class FlowEvents {
 public:
  /// The flow's last byte reached its receiver (its acknowledgement is on its way).
  virtual void on_flow_received(work::FlowId flow, core::Simulator& sim) = 0;
  /// Its acknowledgement reached the sender; `received_at`: when the last byte
  /// reached the receiver.
  virtual void on_flow_acknowledged(work::FlowId flow, Time received_at, core::Simulator& sim) = 0;

 protected:
  ~FlowEvents() = default;
};

class Network {
 public:
  Network(const topo::Fabric& fabric, const work::Dag& dag, core::Simulator& sim,
          const NetworkOptions& options, std::span<const LinkPerturbation> perturbations,
          FlowPriorities priorities, FlowEvents& events);

  /// Bytes one rank's network will allocate for this fabric and DAG (per flow,
  /// per link and per node, and for its `share`: per flow its GPUs send, per
  /// link it sends on with the cells in flight there): part of the resource
  /// guard's estimate, made before building.
  static std::uint64_t estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                      const NetworkOptions& options, const RankShare& share);

  /// By GPU, the node where the bytes of a flow to it from another server are
  /// counted: its switch, where the last link delivers on send, else itself.
  static std::vector<topo::NodeId> inbound_nodes(const topo::Fabric& fabric,
                                                 const NetworkOptions& options);
  /// The node that counts a flow's bytes (its last cell ends the flow there).
  static topo::NodeId counted_at(const topo::Fabric& fabric, std::span<const topo::NodeId> inbound,
                                 work::GpuId src, work::GpuId dst);

  /// The order the engine should take a window's events in for this fabric
  /// and cell size: atom by atom where the fabric is large (at least
  /// kAtomOrderLinks links between atoms: its ports' state no longer fits in a
  /// core's cache) and its fastest such link carries at least two cells
  /// within the atoms' lookahead (so that a switch has several events to
  /// handle in each sub-window); else by time. The run is the same either way.
  static core::EventOrder event_order_for(const topo::Fabric& fabric,
                                          const NetworkOptions& options);
  static constexpr std::size_t kAtomOrderLinks = 16384;

  /// How an event of this tag crosses ranks (`shoal scale`): a cell's head
  /// brings a credit back over its link, as an event or added early
  /// (take_arrival), one message either way; a credit event is that message.
  static core::CrossingRole crossing_role(std::uint32_t tag) {
    switch (static_cast<NetEvent>(EventTag::kind_of(tag))) {
      case NetEvent::kCellHead:
        return core::CrossingRole::kCarryCredit;
      case NetEvent::kCredit:
        return core::CrossingRole::kCredit;
      default:
        return core::CrossingRole::kPlain;
    }
  }

  /// Schedules the failures of links whose source this rank owns.
  void initialize();

  /// A flow of the DAG (of `coflow`) starts at its sender (a GPU this rank owns), now.
  void start_flow(work::FlowId flow, work::CoflowId coflow, core::Simulator& sim);

  /// The network's events (EventTag::is_network).
  void handle(const core::Event& ev, core::Simulator& sim);
  /// Called by the engine for each event from another rank as it arrives,
  /// before it is queued; true: taken here, never an event. A credit that
  /// could go early (Ports::credit_early) had its port been on the sender's
  /// rank is added now: the proof holds from this rank's clock on as it would
  /// from the sender's (the port's state is the same until this rank's next
  /// event), so every partition gives the same run.
  /// A note (kRoute) is taken too: the destination of a cell of a flow this
  /// rank does not hold, kept while the cell is here (TransitRoutes).
  bool take_arrival(const core::Event& ev, core::Simulator& sim) {
    const std::uint32_t kind = EventTag::kind_of(ev.tag);
    if (kind == static_cast<std::uint32_t>(NetEvent::kRoute)) {
      const RoutePayload route = RoutePayload::unpack(ev.payload);
      if (!dag_.holds(route.flow)) transit_.arrive(route.flow, route.dst);
      return true;
    }
    if (kind != static_cast<std::uint32_t>(NetEvent::kCredit)) return false;
    const topo::LinkId link = EventTag::link_of(ev.tag);
    const CreditPayload credit = CreditPayload::unpack(ev.payload);
    return ports_.credit_early(link, credit.cls, credit.bytes, ev.time,
                               sim.floor(ports_.link(link).from));
  }

  /// Called by the engine a few events ahead: warms the port or flow state the
  /// event will touch (the run is bound by memory latency, not arithmetic).
  void prefetch(const core::Event& ev) const {
    const topo::LinkId link = EventTag::link_of(ev.tag);
    switch (static_cast<NetEvent>(EventTag::kind_of(ev.tag))) {
      case NetEvent::kPortFree:
      case NetEvent::kCredit:
        ports_.prefetch_sender(link);
        nic_.prefetch_port(link);  // at a NIC, its own flows come next
        return;
      case NetEvent::kCellHead: {
        const std::uint32_t flow = CellHead::flow_of(ev.payload);
        // In a fragment, the held set says where the flow is (a small array, in cache).
        const work::Flow* f = dag_.find_flow(work::FlowId{flow});
        if (f != nullptr) core::prefetch(f);
        ports_.prefetch_credit_return(link);  // the link it came by; also its serialization time
        return;
      }
      default:
        return;
    }
  }

  /// Called 8 (stage 1), 4 (stage 2) and 2 (stage 3) events ahead, each once
  /// the stage before has brought in what it reads: for a cell, the port it
  /// will be queued at and its lane's hash slot, then the lane; for a port,
  /// the lane it will serve next (which holds its front cell), then the
  /// lane's second cell or the hash slot it empties, the port upstream that
  /// the cell's credit goes to and what delivering it reads; at a NIC its own
  /// flows' groups, then the front flow, then what is kept about that flow.
  void prefetch_stage(const core::Event& ev, int stage) const {
    switch (static_cast<NetEvent>(EventTag::kind_of(ev.tag))) {
      case NetEvent::kPortFree:
      case NetEvent::kCredit:
        prefetch_port_stage(EventTag::link_of(ev.tag), stage);
        return;
      case NetEvent::kCellHead:
        prefetch_cell_stage(ev, stage);
        return;
      default:
        return;
    }
  }

  /// The full invariants over this rank's ports (NetworkOptions::check).
  void check_ports() const;
  /// After a run in which every flow finished: this rank's ports hold no cell
  /// and have all their credit back, it keeps no route of a flow in transit,
  /// and every flow it received has exactly its bytes. Throws an Error naming
  /// the first violation.
  void check_end_state() const;

  /// Routes taken from notes: cells that came to this rank for flows it does not hold.
  std::int64_t routes_taken() const { return transit_.arrivals(); }
  /// Bytes of flows received on this rank (each flow counted on one rank).
  Bytes bytes_received() const;
  /// Cells sent over a link, counted on this rank (one per cell and link crossed).
  std::int64_t cell_hops() const { return cell_hops_; }
  LinkMeters& meters() { return ports_.meters(); }
  /// No cell sent on this rank from now on starts before `floor`
  /// (Simulator::rank_floor): the /link_util bins before it can leave memory.
  void settle_meters(Time floor) { ports_.meters().settle(floor); }
  const NetworkOptions& options() const { return options_; }

 private:
  void prefetch_port_stage(topo::LinkId link, int stage) const;
  void prefetch_cell_stage(const core::Event& ev, int stage) const;
  /// What delivering a cell of `flow` reads (delivered()).
  void prefetch_delivery(std::uint32_t flow) const {
    dag_.prefetch_find_flow(work::FlowId{flow});
    core::prefetch(received_.home_address(flow));
  }

  /// The route of a cell head seen ahead, when it is a pure function of the
  /// flow (Router::peek_switch_link), remembered for the later stage and the
  /// handler: a switch's ECMP choice is then computed once per cell-hop. Keyed
  /// by the event's tiebreak, unique to it, so a miss only means recomputing.
  struct RouteMemo {
    std::uint64_t tiebreak = 0;
    Time time = -1;  // no event has a negative time: empty
    topo::LinkId out = topo::kNoLink;
  };
  static constexpr std::size_t kRouteMemos = 64;  // more than the prefetch distance
  static std::size_t memo_slot(const core::Event& ev) {
    return static_cast<std::size_t>((ev.tiebreak * 0x9E3779B97F4A7C15ULL) >> 58);
  }
  topo::LinkId route_ahead(const core::Event& ev, work::FlowId flow) const {
    if (!router_.can_peek(ev.target, ev.time)) return topo::kNoLink;
    // A flow only routed here: its destination is looked up as it is handled.
    const work::Flow* f = dag_.find_flow(flow);
    if (f == nullptr) return topo::kNoLink;
    const topo::LinkId out = router_.peek_switch_link(ev.target, flow, f->dst);
    if (out != topo::kNoLink) route_memo_[memo_slot(ev)] = {ev.tiebreak, ev.time, out};
    return out;
  }
  topo::LinkId remembered_route(const core::Event& ev) const {
    const RouteMemo& m = route_memo_[memo_slot(ev)];
    return m.tiebreak == ev.tiebreak && m.time == ev.time ? m.out : topo::kNoLink;
  }

  /// The destination of a flow with a cell here: held, or in transit.
  work::GpuId destination(work::FlowId flow) const {
    const work::Flow* f = dag_.find_flow(flow);
    return f != nullptr ? f->dst : transit_.dst(flow);
  }
  /// A cell of `flow` leaves for `to`, on another rank, arriving after
  /// `delay` (`sent`: as an event). That rank learns its destination in a
  /// note unless it holds the flow; this rank forgets it unless it does.
  void pass_on(work::FlowId flow, topo::NodeId to, Time delay, bool sent, core::Simulator& sim);
  void try_send(topo::NodeId node, topo::LinkId link, core::Simulator& sim);
  /// One cell of the port's own flows (the Nic's choice); false: none can go.
  bool send_own(topo::NodeId node, topo::LinkId link, core::Simulator& sim);
  bool send_queued(topo::NodeId node, topo::LinkId link, int cls, core::Simulator& sim);
  /// Relayed or switched cells, classes in strict priority.
  bool send_any_queued(topo::NodeId node, topo::LinkId link, core::Simulator& sim);
  void transmit(topo::NodeId node, topo::LinkId link, int cls, const Cell& cell,
                core::Simulator& sim);
  /// A cell left this node's ingress buffer from `in_link`: its credit reaches
  /// the upstream port after `delay`, by an event or, where that cannot change
  /// the port's choices, at once.
  void return_credit(topo::LinkId in_link, int cls, Bytes bytes, Time delay, core::Simulator& sim,
                     TransmissionNumbers numbers);
  void on_cell_head(const core::Event& ev, core::Simulator& sim);
  /// A cell sent on a link that delivers (LinkState::delivers), its head at
  /// the receiver before the end time: when the link ends at the cell's
  /// receiver, its bytes are counted here. It then needs no event there (true)
  /// unless it is the flow's last cell (`last` set: the receiver ends the flow
  /// in an event of its own) or its credit cannot be added early (the receiver
  /// returns it). What the event did otherwise (the count, a credit added
  /// early) leaves no trace in the order of other events, so the run is the same.
  bool delivered(topo::LinkId link, int cls, work::FlowId flow, Bytes bytes, Time tail, bool slow,
                 bool& last, core::Simulator& sim);
  /// Adds a cell's bytes to its flow's count (conservation: never past the
  /// flow's bytes); true when that completes the flow.
  bool count_received(work::FlowId flow, Bytes bytes);
  /// The node whose rank counts flow f's received bytes: where its last link
  /// starts when that link delivers (LinkState::delivers), else its receiver.
  topo::NodeId counted_at(work::FlowId f) const;
  void on_flow_received(work::FlowId flow, core::Simulator& sim);
  void on_promote(topo::NodeId node, topo::LinkId link, SentFlow flow, core::Simulator& sim);
  /// The port failed: its queued cells and own flows move to other ports of `node`.
  void evacuate(topo::NodeId node, topo::LinkId link, core::Simulator& sim);
  /// How long a flow's acknowledgement takes back to its sender.
  Time ack_latency(const work::Flow& f) const {
    return options_.instant && !options_.instant_latency ? 0 : fabric_.path_latency(f.dst, f.src);
  }
  topo::NodeId gpu_node(work::GpuId g) const { return fabric_.gpu_node(g); }
  work::GpuId gpu_of(topo::NodeId n) const { return fabric_.node(n).index; }

  const topo::Fabric& fabric_;
  const work::Dag& dag_;
  core::Simulator& sim_;
  NetworkOptions options_;
  FlowEvents& events_;
  Ports ports_;
  Router router_;
  Nic nic_;
  mutable std::array<RouteMemo, kRouteMemos> route_memo_{};  // a cache, not state
  ReceivedBytes received_;  // the flows counted on this rank (counted_at)
  TransitRoutes transit_;   // where the cells here of flows held elsewhere go
  // By GPU: the switch it hangs off when it has only one and its link delivers,
  // else its own node (counted_at).
  std::vector<topo::NodeId> inbound_;
  std::int64_t cell_hops_ = 0;  // cells into this rank's nodes (or delivered from them on send)
};

inline void Network::prefetch_port_stage(topo::LinkId link, int stage) const {
  const Port& port = ports_[link];
  if (port.has_own) {
    if (stage == 3) {
      nic_.prefetch_front_flow(link);  // what next_cell reads about its first flow
    } else {
      const void* next = stage == 1 ? nic_.groups_address(link) : nic_.front_address(link);
      if (next != nullptr) core::prefetch(next);
    }
  }
  if (port.queued == 0) return;
  const int cls = std::countr_zero(port.queued);
  const PortQueues::Turn& turn = port.turns[static_cast<std::size_t>(cls)];
  if (stage == 1) {
    core::prefetch(ports_.front_address(turn));
  } else if (stage == 2) {
    // The lane holds its front cell: where it came from and goes are known now.
    ports_.prefetch_front(turn, link, cls);
    const topo::LinkId in = ports_.queues().front_in_link(turn);
    if (in != topo::kNoLink) ports_.prefetch_credit_return(in);
    if (ports_.link(link).delivers) prefetch_delivery(ports_.queues().front_flow(turn));
  }
}

inline void Network::prefetch_cell_stage(const core::Event& ev, int stage) const {
  if (stage == 3) return;
  const work::FlowId flow{CellHead::flow_of(ev.payload)};
  const topo::LinkId out = stage == 1 ? route_ahead(ev, flow) : remembered_route(ev);
  if (out == topo::kNoLink) {
    // At its receiver (or routed by the handler): the count it adds to.
    if (stage == 1) core::prefetch(received_.home_address(flow));
    return;
  }
  const int cls = CellHead::class_of(ev.payload);
  const std::uint32_t hop = CellHead::hop_of(ev.payload) + 1;  // the link it goes on
  if (stage == 1) {
    ports_.prefetch_sender(out);
    ports_.prefetch_slot(out, cls, flow, hop);
  } else {
    ports_.prefetch_push(out, cls, flow, hop);
    // Stage 1 fetched the link.
    if (ports_.link(out).delivers) core::prefetch(received_.home_address(flow));
  }
}

}  // namespace shoal::net
