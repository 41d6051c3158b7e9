#include "shoal/net/network.hpp"

#include <algorithm>
#include <bit>

#include "shoal/core/error.hpp"

namespace shoal::net {

using topo::LinkId;
using topo::NodeId;
using topo::NodeKind;
using work::FlowId;

namespace {

const NetworkOptions& validated(const NetworkOptions& options) {
  validate(options);
  return options;
}

}  // namespace

Network::Network(const topo::Fabric& fabric, const work::Dag& dag, core::Simulator& sim,
                 const NetworkOptions& options, std::span<const LinkPerturbation> perturbations,
                 FlowPriorities priorities, FlowEvents& events)
    : fabric_(fabric),
      dag_(dag),
      sim_(sim),
      options_(validated(options)),
      events_(events),
      ports_(fabric, dag, sim, options_, perturbations),
      router_(fabric, dag, options.load_balancing, Ports::failure_times(fabric, perturbations),
              ports_.queued_cells()),
      nic_(fabric, dag, sim, options_, std::move(priorities), ports_, router_),
      received_(
          dag.held_count(), dag.whole() ? ReceivedBytes::PlaceOf{} : [&dag](std::uint32_t f) {
            return dag.held_index(FlowId{f});
          }) {
  inbound_ = inbound_nodes(fabric, options);
  for (LinkId l = 0; l < fabric.link_count() && options.deliver_on_send; ++l) {
    const topo::Link& link = fabric.link(l);
    if (fabric.node(link.to).kind != NodeKind::kGpu || !ports_.holds_link(l)) continue;
    const NodeKind from = fabric.node(link.from).kind;
    ports_.link(l).delivers =
        from == NodeKind::kNvSwitch ||
        (from == NodeKind::kSwitch && inbound_[fabric.node(link.to).index] == link.from);
  }
}

std::vector<NodeId> Network::inbound_nodes(const topo::Fabric& fabric,
                                           const NetworkOptions& options) {
  // Last links that deliver: from a GPU's NVSwitch (inside its server, so on its
  // rank), and from its switch when it hangs off only one. A dual-plane NIC's
  // cells come by two switches, perhaps on two ranks, and a flow's bytes must be
  // counted in one place: those keep their events.
  std::vector<std::uint32_t> switch_links(fabric.gpu_count(), 0);
  std::vector<NodeId> switch_of(fabric.gpu_count(), 0);
  for (LinkId l = 0; l < fabric.link_count(); ++l) {
    const topo::Link& link = fabric.link(l);
    if (fabric.node(link.to).kind == NodeKind::kGpu &&
        fabric.node(link.from).kind == NodeKind::kSwitch) {
      const work::GpuId g = fabric.node(link.to).index;
      ++switch_links[g];
      switch_of[g] = link.from;
    }
  }
  std::vector<NodeId> inbound(fabric.gpu_count());
  for (work::GpuId g = 0; g < fabric.gpu_count(); ++g) {
    inbound[g] =
        options.deliver_on_send && switch_links[g] == 1 ? switch_of[g] : fabric.gpu_node(g);
  }
  return inbound;
}

NodeId Network::counted_at(const topo::Fabric& fabric, std::span<const NodeId> inbound,
                           work::GpuId src, work::GpuId dst) {
  const std::uint32_t per_server = fabric.gpus_per_server();
  // Inside a server: by NVLink from its NVSwitch, on the receiver's rank.
  if (src / per_server == dst / per_server) return fabric.gpu_node(dst);
  return inbound[dst];
}

void Network::initialize() {
  // A failed link's port re-routes what waits there when it goes down.
  for (LinkId l = 0; l < fabric_.link_count(); ++l) {
    const NodeId from = fabric_.link(l).from;
    if (router_.fail_at(l) != kTimeInfinity && sim_.owns(from)) {
      sim_.act_as(from);
      sim_.send(from, router_.fail_at(l), EventTag::pack(NetEvent::kLinkFailed, l), 0);
    }
  }
}

void Network::start_flow(FlowId f, work::CoflowId coflow, core::Simulator& sim) {
  const work::Flow& flow = dag_.flow(f);
  if (options_.instant) {
    // With latency the receiver counts the bytes, on its own rank.
    if (!options_.instant_latency) count_received(f, flow.bytes);
    const Time latency = options_.instant_latency ? fabric_.path_latency(flow.src, flow.dst) : 0;
    sim.send(gpu_node(flow.dst), latency, EventTag::pack(NetEvent::kFlowReceived), flow_payload(f));
    return;
  }
  const NodeId sender = gpu_node(flow.src);
  const LinkId link = router_.first_link(f, sim.now());
  const SentFlow sent = nic_.start(link, f, coflow, flow.bytes, sim);
  ports_[link].has_own = true;
  if (options_.starvation_after != kTimeInfinity) {
    sim.send(sender, options_.starvation_after, EventTag::pack(NetEvent::kPromote, link), sent);
  }
  try_send(sender, link, sim);
}

bool Network::send_own(NodeId node, LinkId link, core::Simulator& sim) {
  OwnCell own;
  if (!nic_.next_cell(link, ports_[link], options_.cell_size, sim.now(), own)) return false;
  transmit(node, link, own.cls,
           {own.flow, static_cast<std::uint32_t>(own.bytes), topo::kNoLink, 0, sim.now()}, sim);
  return true;
}

[[gnu::always_inline]] inline bool Network::send_queued(NodeId node, LinkId link, int c,
                                                        core::Simulator& sim) {
  Cell cell;
  if (!ports_.dequeue_if_credit(link, c, cell)) return false;
  transmit(node, link, c, cell, sim);
  return true;
}

[[gnu::always_inline]] inline bool Network::send_any_queued(NodeId node, LinkId link,
                                                            core::Simulator& sim) {
  for (unsigned waiting = ports_[link].queued; waiting != 0; waiting &= waiting - 1) {
    if (send_queued(node, link, std::countr_zero(waiting), sim)) return true;
  }
  return false;
}

[[gnu::always_inline]] inline void Network::try_send(NodeId node, LinkId link,
                                                     core::Simulator& sim) {
  Port& port = ports_[link];
  if (port.free_pending) return;  // its port-free event will call again
  const bool own = port.has_own;
  if (port.queued == 0 && !own) return;
  if (sim.now() >= port.fail_at) {  // left empty, so evacuating never comes back here
    evacuate(node, link, sim);
    return;
  }
  if (sim.now() < port.busy_until) {
    port.free_pending = true;
    // The port-free event of the last transmission (numbered so, at a GPU).
    send_numbered(sim, nic_.last_numbers(link), TransmissionEvent::kPortFree, node,
                  port.busy_until - sim.now(), EventTag::pack(NetEvent::kPortFree, link), 0);
    return;
  }
  if (!own) {
    send_any_queued(node, link, sim);
  } else if (port.queued == 0) {
    if (ports_.link(link).burst == LinkState::kNoBurst ||
        !nic_.send_burst(node, link, options_.cell_size, sim)) {
      send_own(node, link, sim);
    }
  } else if (port.relay_turn) {
    // A GPU's port serves its own flows and the cells it relays (PXN) in turn.
    if (send_any_queued(node, link, sim)) {
      port.relay_turn = false;
    } else {
      send_own(node, link, sim);
    }
  } else if (send_own(node, link, sim)) {
    port.relay_turn = true;
  } else {
    send_any_queued(node, link, sim);
  }
}

void Network::transmit(NodeId node, LinkId link, int cls, const Cell& cell, core::Simulator& sim) {
  const FlowId flow{cell.flow};
  const Bytes bytes = cell.bytes;
  const Time tail_in = cell.tail;
  const LinkId in_link = cell.in_link;
  const Time now = sim.now();
  const bool slow = ports_.perturbed(link, now);
  const Time serialize = ports_.serialization(link, bytes, slow);
  // Cut-through: start once the head is here, but not so early as to finish
  // before the tail arrives. Store-and-forward: start once the tail is here.
  const Time ready = options_.cut_through ? tail_in - serialize : tail_in;
  const Time start = std::max(now, ready);
  const Time finish = start + serialize;
  ports_.occupy(link, cls, bytes, start, serialize);
  const LinkState& state = ports_.link(link);
  const TransmissionNumbers numbers = nic_.take_numbers(link, state);
  Port& port = ports_[link];
  // More to send: wake when this cell has left. A switch sends that first, as
  // it always has; a GPU's port last, its events in the order of their numbers.
  const bool wake = port.queued != 0 || port.has_own;
  if (wake) port.free_pending = true;
  const std::uint32_t port_free = EventTag::pack(NetEvent::kPortFree, link);
  if (wake && numbers.stream == 0) sim.send(node, finish - now, port_free, 0);
  const Time head = start + ports_.latency(link, slow);
  bool last = false;
  bool sent = false;
  if (!state.delivers || head >= sim.end_time() ||
      !delivered(link, cls, flow, bytes, head + serialize, slow, last, sim)) {
    send_numbered(sim, numbers, TransmissionEvent::kCellHead, state.to, head - now,
                  EventTag::pack(NetEvent::kCellHead, link),
                  CellHead{flow, bytes, cls, cell.hop, slow, last}.pack());
    sent = true;
  }
  if (!sim.owns(state.to)) [[unlikely]]
    pass_on(flow, state.to, head - now, sent, sim);
  if (in_link != topo::kNoLink) {
    // The cell leaves this node's ingress buffer as its tail leaves: credit upstream.
    return_credit(in_link, cls, bytes,
                  finish - now + ports_.latency(in_link, ports_.perturbed(in_link, now)), sim,
                  numbers);
  }
  if (wake && numbers.stream != 0) {
    send_numbered(sim, numbers, TransmissionEvent::kPortFree, node, finish - now, port_free, 0);
  }
}

void Network::pass_on(FlowId flow, NodeId to, Time delay, bool sent, core::Simulator& sim) {
  const work::Flow* f = dag_.find_flow(flow);
  if (sent) {
    if (f != nullptr) {
      send_route_note(sim, fabric_, flow, f->src, f->dst, to, delay);
    } else {
      send_route_note(sim, fabric_, flow, std::nullopt, transit_.dst(flow), to, delay);
    }
  }
  if (f == nullptr) transit_.leave(flow);
}

[[gnu::always_inline]] inline void Network::return_credit(LinkId in_link, int cls, Bytes bytes,
                                                          Time delay, core::Simulator& sim,
                                                          TransmissionNumbers numbers) {
  // The upstream node acts next no earlier than the engine's floor for it (now, in time order).
  const NodeId upstream = ports_.link(in_link).from;
  const Time arrival = sim.now() + delay;
  sim.will_arrive(upstream, arrival);
  if (ports_.credit_early(in_link, cls, bytes, arrival, sim.floor(upstream))) return;
  send_numbered(sim, numbers, TransmissionEvent::kCredit, upstream, delay,
                EventTag::pack(NetEvent::kCredit, in_link), CreditPayload{cls, bytes}.pack());
}

[[gnu::always_inline]] inline bool Network::delivered(LinkId link, int cls, FlowId flow,
                                                      Bytes bytes, Time tail, bool slow, bool& last,
                                                      core::Simulator& sim) {
  if (gpu_of(ports_.link(link).to) != destination(flow)) return false;  // relayed (PXN) on
  // The last cell ends its flow at the receiver, in an event of the receiver's
  // own (ordered there as before among its tasks' events).
  if (count_received(flow, bytes)) {
    last = true;
    return false;
  }
  // The receiver would return the credit as the tail arrives; added early (or
  // else the cell goes as an event and the receiver returns it).
  // The port is this node's own: it acts next at or after now.
  if (!ports_.credit_early(link, cls, bytes, tail + ports_.latency(link, slow), sim.now())) {
    return false;
  }
  ++cell_hops_;
  return true;
}

bool Network::count_received(FlowId flow, Bytes bytes) {
  return received_.add(flow, bytes, dag_.flow(flow).bytes);
}

NodeId Network::counted_at(FlowId f) const {
  const work::Flow& flow = dag_.flow(f);
  return counted_at(fabric_, inbound_, flow.src, flow.dst);
}

[[gnu::always_inline]] inline void Network::on_cell_head(const core::Event& ev,
                                                         core::Simulator& sim) {
  ++cell_hops_;
  const LinkId in_link = EventTag::link_of(ev.tag);
  const CellHead head = CellHead::unpack(ev.payload);
  const FlowId flow{head.flow};
  const Bytes bytes = head.bytes;
  const bool slow = head.slow;  // as the sender transmitted it
  const Time tail = sim.now() + ports_.serialization(in_link, bytes, slow);
  const NodeId here = ev.target;
  const int cls = head.cls;  // the class it was sent in
  const topo::Node& node = fabric_.node(here);
  const work::GpuId dst = destination(flow);
  if (node.kind == NodeKind::kGpu && gpu_of(here) == dst) {
    // At the receiver: the NIC takes the cell as its tail arrives. Over a link
    // that delivers, its bytes were counted where the link starts.
    bool last = head.last;
    if (!ports_.link(in_link).delivers) last = count_received(flow, bytes);
    return_credit(in_link, cls, bytes, tail - sim.now() + ports_.latency(in_link, slow), sim,
                  TransmissionNumbers{});
    if (last) {
      sim.send(here, tail - sim.now(), EventTag::pack(NetEvent::kFlowReceived), flow_payload(flow));
    }
    return;
  }
  LinkId out = remembered_route(ev);
  if (out == topo::kNoLink) out = router_.next_link(here, flow, dst, sim.now(), sim.rng());
  const Cell cell{flow, static_cast<std::uint32_t>(bytes), in_link, head.hop + 1, tail};
  Port& port = ports_[out];
  if (port.queued == 0 && !port.has_own && !port.free_pending && sim.now() >= port.busy_until &&
      port.credits[cls] >= bytes) {
    transmit(here, out, cls, cell, sim);  // an idle port: what queueing would do, without the queue
    return;
  }
  ports_.enqueue(out, cls, cell);
  try_send(here, out, sim);
}

void Network::on_flow_received(FlowId flow, core::Simulator& sim) {
  const work::Flow& f = dag_.flow(flow);
  if (options_.instant_latency) count_received(flow, f.bytes);
  // The acknowledgement returns along the path (its latency, no queueing).
  sim.send(gpu_node(f.src), ack_latency(f), EventTag::pack(NetEvent::kFlowAck), flow_payload(flow));
  events_.on_flow_received(flow, sim);
}

void Network::on_promote(NodeId node, LinkId link, SentFlow f, core::Simulator& sim) {
  // The starvation guard: a flow its NIC has not served for the threshold
  // goes first there (its cells keep their class in switches).
  if (!nic_.waiting(f) || ports_[link].fail_at <= sim.now()) return;
  const Time starving_at = nic_.last_served(f) + options_.starvation_after;
  if (starving_at > sim.now()) {  // served meanwhile: look again a threshold after that
    sim.send(node, starving_at - sim.now(), EventTag::pack(NetEvent::kPromote, link), f);
    return;
  }
  nic_.promote(link, f);
  ports_[link].has_own = true;
  try_send(node, link, sim);
}

void Network::handle(const core::Event& ev, core::Simulator& sim) {
  const LinkId link = EventTag::link_of(ev.tag);
  switch (static_cast<NetEvent>(EventTag::kind_of(ev.tag))) {
    case NetEvent::kCellHead:
      on_cell_head(ev, sim);
      return;
    case NetEvent::kPortFree:
      ports_[link].free_pending = false;
      try_send(ev.target, link, sim);
      return;
    case NetEvent::kCredit: {
      const CreditPayload credit = CreditPayload::unpack(ev.payload);
      ports_.add_credit(link, credit.cls, credit.bytes);
      try_send(ev.target, link, sim);
      return;
    }
    case NetEvent::kFlowReceived:
      on_flow_received(flow_of_payload(ev.payload), sim);
      return;
    case NetEvent::kFlowAck: {
      // The receiver's end time, known here exactly: the ack took the path's latency.
      const FlowId flow = flow_of_payload(ev.payload);
      const work::Flow& f = dag_.flow(flow);
      events_.on_flow_acknowledged(flow, sim.now() - ack_latency(f), sim);
      return;
    }
    case NetEvent::kLinkFailed:
      evacuate(ev.target, link, sim);
      return;
    case NetEvent::kPromote:
      on_promote(ev.target, link, static_cast<SentFlow>(ev.payload), sim);
      return;
    case NetEvent::kRoute:  // a note, taken as it arrives: never an event
      break;
  }
  throw Error("internal: unknown network event kind " + std::to_string(EventTag::kind_of(ev.tag)));
}

void Network::evacuate(NodeId node, LinkId link, core::Simulator& sim) {
  Port& port = ports_[link];
  const Time now = sim.now();
  for (int c = 0; c < kClasses; ++c) {
    // Cells waiting here take another way from this node (they are still in its
    // ingress buffer, so no credit moves); flows move to another NIC port.
    while (!port.turns[static_cast<std::size_t>(c)].empty()) {
      const Cell cell = ports_.front(link, c);
      ports_.pop(link, c);
      const FlowId flow{cell.flow};
      ports_.enqueue(router_.next_link(node, flow, destination(flow), now, sim.rng()), c, cell);
    }
  }
  nic_.drain(link, [&](SentFlow f) {
    const LinkId other = router_.first_link(nic_.flow_of(f), now);
    nic_.move(other, f, sim);
    ports_[other].has_own = true;
  });
  port.has_own = false;
  port.queued = 0;
  for (const LinkId other : fabric_.out_links(node)) {
    if (other != link) try_send(node, other, sim);
  }
}

void Network::check_ports() const {
  for (LinkId l = 0; l < fabric_.link_count(); ++l) {
    if (!sim_.owns(fabric_.link(l).from)) continue;
    const std::int64_t cells = ports_.check(l);
    if (ports_[l].has_own == nic_.idle(l)) {
      invariant_violated(sim_.now(), "link " + std::to_string(l) +
                                         ": the own-flows flag disagrees with its " +
                                         std::to_string(nic_.key_groups(l)) + " key groups");
    }
    if (options_.load_balancing == LoadBalancing::kAdaptive && cells != ports_.queued_cells()[l]) {
      invariant_violated(sim_.now(), "link " + std::to_string(l) + " counts " +
                                         std::to_string(ports_.queued_cells()[l]) +
                                         " queued cells and holds " + std::to_string(cells));
    }
  }
}

void Network::check_end_state() const {
  check_ports();
  for (LinkId l = 0; l < fabric_.link_count(); ++l) {
    if (!sim_.owns(fabric_.link(l).from)) continue;
    ports_.check_drained(l);
    if (!nic_.idle(l)) {
      invariant_violated(sim_.now(),
                         "at the end, link " + std::to_string(l) + " still holds flows");
    }
  }
  // Every cell that came here for a flow held elsewhere has left.
  if (transit_.size() != 0) {
    invariant_violated(sim_.now(), "at the end, this rank keeps the routes of " +
                                       std::to_string(transit_.size()) +
                                       " flows in transit, whose cells have all left");
  }
  // The flows this rank counts are among those it holds (exec/fragment.hpp).
  for (const work::Coflow& c : dag_.coflows()) {
    dag_.for_each_flow(c, [&](FlowId f, const work::Flow& flow) {
      if (sim_.owns(counted_at(f)) && !received_.has_ended(f)) {
        invariant_violated(sim_.now(), "conservation: flow " + std::to_string(f) + " received " +
                                           std::to_string(received_.of(f, flow.bytes)) + " of " +
                                           std::to_string(flow.bytes) + " bytes");
      }
    });
  }
}

Bytes Network::bytes_received() const { return received_.total(); }

}  // namespace shoal::net
