#include "shoal/net/nic.hpp"

#include <string>

#include "shoal/core/error.hpp"

namespace shoal::net {

using topo::LinkId;
using topo::NodeId;

Nic::Nic(const topo::Fabric& fabric, const work::Dag& dag, const core::Simulator& sim,
         const NetworkOptions& options, FlowPriorities priorities, Ports& ports,
         const Router& router)
    : fabric_(fabric),
      dag_(dag),
      ports_(ports),
      port_flows_(fabric.link_count()),
      coflow_key_(std::move(priorities.key)),
      coflow_class_(std::move(priorities.cls)),
      guarded_(!options.instant && options.starvation_after != kTimeInfinity) {
  for (LinkId l = 0; l < fabric.link_count(); ++l) {
    if (sim.owns(fabric.link(l).from)) port_flows_.construct(l);
  }
  // The instant network cuts no cells: nothing is kept per flow.
  if (options.instant) return;
  const std::size_t coflows = dag.coflows().size();
  if (coflow_class_.empty()) coflow_class_.assign(coflows, 0);
  if (coflow_key_.empty()) coflow_key_.assign(coflows, 0);
  if (coflow_class_.size() != coflows || coflow_key_.size() != coflows) {
    throw Error("internal: priorities for " + std::to_string(coflow_key_.size()) +
                " coflows, DAG has " + std::to_string(coflows));
  }
  // Key 0 is kept for flows the starvation guard promotes.
  if (guarded_) {
    for (std::uint32_t& k : coflow_key_) ++k;
  }
  // GPUs that relay other GPUs' cells to their NIC (PXN): a relayed cell takes
  // its turn with the GPU's own, so their ports never burst.
  const std::uint32_t per_server = fabric.gpus_per_server();
  std::vector<std::uint8_t> relays(fabric.gpu_count(), 0);
  std::vector<std::uint8_t> owned(fabric.gpu_count(), 0);
  for (work::GpuId g = 0; g < fabric.gpu_count(); ++g) owned[g] = sim.owns(fabric.gpu_node(g));
  gpu_min_key_.assign(fabric.gpu_count(), UINT32_MAX);
  std::size_t sends = 0;
  for (std::uint32_t c = 0; c < coflows; ++c) {
    for (const work::Flow& flow : dag.flows_of(dag.coflows()[c])) {
      gpu_min_key_[flow.src] = std::min(gpu_min_key_[flow.src], coflow_key_[c]);
      sends += owned[flow.src];
      if (flow.src / per_server != flow.dst / per_server &&
          !fabric.shares_plane(flow.src, flow.dst)) {
        relays[fabric.relay_for(flow.src, flow.dst)] = 1;
      }
    }
  }
  // Slots for every flow this rank's GPUs send, taken as they start.
  sent_.reserve(sends);
  if (guarded_) last_served_.reserve(sends);
  for (work::GpuId g = 0; g < fabric.gpu_count(); ++g) {
    const auto out = fabric.out_links(fabric.gpu_node(g));
    // A GPU with more ports than streams (none built here) numbers the rest
    // as its own, and they do not burst.
    for (std::size_t i = 0; i + 1 < core::kStreams && i < out.size(); ++i) {
      if (!ports.holds_link(out[i])) continue;  // neither end is this rank's
      LinkState& state = ports.link(out[i]);
      state.stream = static_cast<std::uint8_t>(i + 1);
      // Only this rank's GPUs send, so only their ports keep a burst record.
      if (options.nic_bursts && owned[g] != 0 && options.starvation_after == kTimeInfinity &&
          relays[g] == 0 && router.fail_at(out[i]) == kTimeInfinity) {
        state.burst = static_cast<std::uint32_t>(bursts_.size());
        bursts_.emplace_back();
      }
    }
  }
}

SentFlow Nic::start(LinkId link, work::FlowId flow, work::CoflowId coflow, Bytes bytes,
                    const core::Simulator& sim) {
  const auto s = static_cast<SentFlow>(sent_.size());
  const std::size_t c = dag_.coflow_slot(coflow);
  const std::uint32_t key = coflow_key_[c];
  sent_.push_back({flow, key, static_cast<std::uint64_t>(bytes), coflow_class_[c]});
  if (guarded()) last_served_.push_back(sim.now());
  join(link, key, s, sim);
  return s;
}

void Nic::join(LinkId link, std::uint32_t key, SentFlow flow, const core::Simulator& sim) {
  KeyedFlows& own = port_flows_[link].flows;
  const LinkState& state = ports_.link(link);
  const Burst* burst = state.burst != LinkState::kNoBurst ? &bursts_[state.burst] : nullptr;
  if (burst == nullptr || burst->key != key || burst->tail == 0) {
    own.push(key, flow);
    return;
  }
  // Transmission j + 1 of the burst (j >= 1) would have been sent by the
  // port-free event of transmission j: how many precede this one.
  const Time now = sim.now();
  std::uint32_t sent = 1;
  while (sent < burst->count) {
    const Time at = burst->start[sent];
    const TransmissionNumbers numbers = numbers_of(link, burst->first + sent - 1);
    const std::uint64_t event = core::make_tiebreak(
        state.from, numbers.stream,
        numbers.first + static_cast<std::uint64_t>(TransmissionEvent::kPortFree));
    if (at > now || (at == now && event > sim.current_tiebreak())) break;
    ++sent;
  }
  // It goes behind the flows those sent, ahead of those the later ones served last.
  std::size_t behind = 0;
  for (std::uint32_t i = burst->tail; i > 0 && burst->last[i - 1] > sent; --i) ++behind;
  own.insert(key, flow, behind);
}

[[gnu::always_inline]] inline Time Nic::start_cell(LinkId link, int cls, work::FlowId flow,
                                                   Bytes bytes, Time at,
                                                   TransmissionNumbers numbers,
                                                   core::Simulator& sim) {
  const bool slow = ports_.perturbed(link, at);
  const Time serialize = ports_.serialization(link, bytes, slow);
  ports_.occupy(link, cls, bytes, at, serialize);
  const NodeId to = ports_.link(link).to;
  const Time delay = at + ports_.latency(link, slow) - sim.now();
  send_numbered(sim, numbers, TransmissionEvent::kCellHead, to, delay,
                EventTag::pack(NetEvent::kCellHead, link),
                CellHead{flow, bytes, cls, 0, slow, false}.pack());
  // A dual-plane NIC's leaf may be on another rank (its own flow: held here).
  if (!sim.owns(to)) [[unlikely]] {
    const work::Flow& f = dag_.flow(flow);
    send_route_note(sim, fabric_, flow, f.src, f.dst, to, delay);
  }
  return at + serialize;
}

bool Nic::send_burst(NodeId node, LinkId link, Bytes cell_size, core::Simulator& sim) {
  KeyedFlows& own = port_flows_[link].flows;
  const std::uint32_t key = own.key(0);
  // A flow of a lower key may start at this GPU meanwhile and go first.
  if (key != gpu_min_key_[fabric_.node(node).index]) return false;
  Port& port = ports_[link];
  const LinkState& state = ports_.link(link);
  Burst& burst = bursts_[state.burst];
  const std::size_t flows = own.group_size(0);
  const Time now = sim.now();
  // Cells that start within the link's latency: further ahead, the events
  // they send would wait in the queue longer than one per cell would have.
  const Time horizon = saturating_add(now, state.latency);
  std::size_t limit = kMaxBurst;
  std::size_t count = 0;
  TransmissionNumbers numbers;
  Time at = now;
  // Until `at`, nothing can change what the port sends: credits only grow, no
  // cell is relayed here, a flow that starts has this key or a higher one and
  // joins the back of the turn (join puts it where it would have been).
  while (count < limit && !own.empty() && own.key(0) == key && at < sim.end_time() &&
         (count == 0 || at < horizon)) {
    const SentFlow s = own.front(0);
    Sent& sent = sent_[s];
    if (sent.to_send == 0 || sent.key != key) break;  // stale: next_cell drops it
    const int c = static_cast<int>(sent.cls);
    const Bytes bytes = std::min(cell_size, static_cast<Bytes>(sent.to_send));
    if (port.credits[c] < bytes) break;
    sent.to_send -= static_cast<std::uint64_t>(bytes);
    const bool stay = sent.to_send > 0;
    if (stay) {
      own.rotate(0);
    } else {
      own.pop(0);
      port.has_own = !own.empty();
    }
    if (count == 0) {
      burst.tail = 0;
      // A flow that joins after this cell is served after every flow now in
      // the turn: each of them can go once more (the first twice if it stays).
      limit = std::min(kMaxBurst, flows + (stay ? 1 : 0));
      burst.first = port_flows_[link].transmissions;
    }
    numbers = take_numbers(link, state);
    burst.start[count] = at;
    // Where it stays, it went to the back of the turn. (The first flow, sent
    // again last, is placed by that; join never counts its first place.)
    if (stay) burst.last[burst.tail++] = static_cast<std::uint8_t>(count + 1);
    at = start_cell(link, c, work::FlowId{sent.flow}, bytes, at, numbers, sim);
    ++count;
  }
  if (count == 0) return false;
  burst.key = key;
  burst.count = static_cast<std::uint32_t>(count);
  if (port.queued != 0 || port.has_own) {  // more to send: wake when the last cell has left
    port.free_pending = true;
    send_numbered(sim, numbers, TransmissionEvent::kPortFree, node, at - now,
                  EventTag::pack(NetEvent::kPortFree, link), 0);
  }
  return true;
}

std::uint64_t Nic::estimate_bytes(const work::Dag& dag, const NetworkOptions& options,
                                  const RankShare& share) {
  const std::uint64_t per_flow = options.instant                             ? 0
                                 : options.starvation_after != kTimeInfinity ? kBytesPerGuardedFlow
                                                                             : kBytesPerFlow;
  return share.flows_sent * per_flow + dag.coflows().size() * 5 + share.links * sizeof(PortFlows) +
         share.gpus * (core::kStreams - 1) * sizeof(Burst);
}

}  // namespace shoal::net
