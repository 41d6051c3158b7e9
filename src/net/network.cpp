#include "shoal/net/network.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "shoal/core/error.hpp"
#include "shoal/core/random.hpp"

namespace shoal::net {

using topo::LinkId;
using topo::NodeId;
using topo::NodeKind;

void validate(const NetworkOptions& options) {
  if (options.cell_size <= 0 || options.cell_size > kMaxCell) {
    throw Error("network.cell_size must be between 1 B and 16 MiB");
  }
  if (options.buffer_per_class < options.cell_size) {
    throw Error("network.buffer_per_class (" + format_bytes(options.buffer_per_class) +
                ") must hold at least one cell (" + format_bytes(options.cell_size) + ")");
  }
  if (options.buffer_per_class > kMaxBufferPerClass) {
    throw Error("network.buffer_per_class (" + format_bytes(options.buffer_per_class) +
                ") must be at most " + format_bytes(kMaxBufferPerClass));
  }
}

namespace {

std::vector<Time> failure_times(const topo::Fabric& fabric, const Perturbations& perturbations) {
  std::vector<Time> at(fabric.link_count(), kTimeInfinity);
  for (const LinkPerturbation& p : perturbations.links) {
    if (p.fail) at[p.link] = std::min(at[p.link], p.at);
  }
  return at;
}

}  // namespace

std::uint64_t Network::estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                      const NetworkOptions& options) {
  const std::uint64_t flows = dag.flows().size();
  const std::uint64_t tasks = dag.tasks().size();
  const std::uint64_t links = fabric.link_count();
  const std::uint64_t nodes = fabric.node_count();
  // Every rank sizes its per-flow and per-task arrays for the whole DAG.
  std::uint64_t per_flow = sizeof(Bytes) * 2 + sizeof(Time) * 3 + sizeof(std::uint32_t) * 2 + 1 +
                           32;  // class, key, last served, ...; the runner's and router's share
  std::uint64_t per_task = sizeof(Time) * 2 + 16;
  if (options.record) {
    // Rows wait for the flush (on one rank, until the end), HDF5 converts and
    // compresses them in buffers of its own, and rank 0 gathers every flow's and
    // task's times for the tables written at the end: measured on the
    // 1,024-GPU Qwen job at one rank, 471 MB for 1.5 M flows (docs/reliability.md).
    per_flow += 320;
    per_task += 160;
  }
  // Cells in flight are bounded by the credits: a class's buffer per link; most
  // links carry one or two classes at a time.
  const std::uint64_t cells_per_link =
      2 *
      static_cast<std::uint64_t>(options.buffer_per_class / std::max<Bytes>(options.cell_size, 1));
  const std::uint64_t per_link =
      sizeof(Port) + sizeof(std::int32_t) + sizeof(LinkState) + sizeof(BitsPerSecond) +
      sizeof(OwnFlows) + cells_per_link * (sizeof(core::Event) + PortQueues::kMaxBytesPerCell);
  const std::uint64_t per_link_record = options.record ? sizeof(LinkTally) : 0;
  const std::uint64_t per_node = 64 + 32;  // the engine's entity core and its queue share
  // Lanes found by hop: a slot per flow and hop (counted as if no link fails).
  const std::uint64_t lane_slots = PortQueues::by_hop_bytes(flows, lane_hops(fabric, options, {}));
  return flows * per_flow + lane_slots + tasks * per_task + links * (per_link + per_link_record) +
         nodes * per_node + std::uint64_t{fabric.gpu_count()} * sizeof(Gpu) +
         std::uint64_t{fabric.gpu_count()} * (core::kStreams - 1) * sizeof(Burst);
}

std::uint32_t Network::lane_hops(const topo::Fabric& fabric, const NetworkOptions& options,
                                 const Perturbations& perturbations) {
  // A flow's cells that are h links into their path wait at one port and
  // class only where routes never change: ECMP (not spraying), no link that
  // fails, no starvation guard (a promoted flow's cells change class).
  const bool failures = std::any_of(perturbations.links.begin(), perturbations.links.end(),
                                    [](const LinkPerturbation& p) { return p.fail; });
  const std::uint32_t hops = fabric.longest_route();
  if (!options.lanes_by_hop || !options.switch_round_robin ||
      options.load_balancing != LoadBalancing::kEcmp || failures ||
      options.starvation_after != kTimeInfinity || hops > kMaxHops) {
    return 0;
  }
  return hops;
}

core::EventOrder Network::event_order_for(const topo::Fabric& fabric,
                                          const NetworkOptions& options) {
  const core::Layout& layout = fabric.layout();
  if (layout.links().size() < kAtomOrderLinks) return core::EventOrder::kTime;
  Time lookahead = kTimeInfinity;
  BitsPerSecond fastest = 0;
  for (topo::LinkId l = 0; l < fabric.link_count(); ++l) {
    const topo::Link& link = fabric.link(l);
    if (layout.atom_of(link.from) == layout.atom_of(link.to)) continue;
    lookahead = std::min(lookahead, link.latency);
    fastest = std::max(fastest, link.rate);
  }
  if (lookahead == kTimeInfinity || lookahead <= 0) return core::EventOrder::kTime;
  return transmit_time(2 * options.cell_size, fastest) <= lookahead ? core::EventOrder::kAtom
                                                                    : core::EventOrder::kTime;
}

PortQueues Network::make_queues(const topo::Fabric& fabric, const work::Dag& dag,
                                const NetworkOptions& options, const Perturbations& perturbations) {
  if (!options.switch_round_robin) return PortQueues::fifo();
  const std::uint32_t hops = lane_hops(fabric, options, perturbations);
  return hops == 0 ? PortQueues::hashed() : PortQueues::by_hop(dag.flows().size(), hops);
}

Network::Network(const topo::Fabric& fabric, const work::Dag& dag, core::Simulator& sim,
                 const NetworkOptions& options, const Perturbations& perturbations,
                 sched::FlowPriorities priorities)
    : fabric_(fabric),
      dag_(dag),
      sim_(sim),
      options_(options),
      runner_(dag, [&](work::GpuId g) { return sim.owns(fabric.gpu_node(g)); }),
      count_queued_(options.load_balancing == LoadBalancing::kAdaptive),
      queued_cells_(fabric.link_count(), 0),
      router_(fabric, dag, options.load_balancing, failure_times(fabric, perturbations),
              queued_cells_),
      ports_(fabric.link_count()),
      queues_(make_queues(fabric, dag, options, perturbations)),
      own_(fabric.link_count()),
      gpus_(fabric.gpu_count()),
      flow_class_(std::move(priorities.cls)),
      flow_key_(std::move(priorities.key)),
      to_send_(dag.flows().size(), 0),
      received_(dag.flows().size(), 0),
      flow_start_(dag.flows().size(), kTimeInfinity),
      flow_end_(dag.flows().size(), -1),
      task_start_(dag.tasks().size(), kTimeInfinity),
      task_end_(dag.tasks().size(), -1) {
  validate(options);
  for (const work::ComputeTask& t : dag.tasks())
    iterations_ = std::max(iterations_, t.labels.iteration + 1);
  gpu_iteration_wait_.assign(std::size_t{fabric.gpu_count()} * iterations_, 0);
  if (flow_class_.empty()) flow_class_.assign(dag.flows().size(), 0);
  if (flow_key_.empty()) flow_key_.assign(dag.flows().size(), 0);
  if (flow_class_.size() != dag.flows().size() || flow_key_.size() != dag.flows().size()) {
    throw Error("internal: priorities for " + std::to_string(flow_key_.size()) +
                " flows, DAG has " + std::to_string(dag.flows().size()));
  }
  if (options.record) {
    flow_coflow_.resize(dag.flows().size());
    for (std::uint32_t c = 0; c < dag.coflows().size(); ++c) {
      const work::Coflow& coflow = dag.coflows()[c];
      for (std::uint32_t i = 0; i < coflow.flow_count; ++i) flow_coflow_[coflow.first_flow + i] = c;
    }
    flow_recorded_.assign(dag.flows().size(), 0);
    task_recorded_.assign(dag.tasks().size(), 0);
    tallies_.resize(fabric.link_count());
    busy_time_.assign(fabric.link_count(), 0);
    binning_ = options.link_util_bin > 0 && options.link_util_top > 0;
  }
  // Key 0 is kept for flows the starvation guard promotes.
  if (options.starvation_after != kTimeInfinity) {
    for (std::uint32_t& k : flow_key_) ++k;
    last_served_.assign(dag.flows().size(), 0);
  }
  links_.resize(fabric.link_count());
  link_rate_.assign(fabric.link_count(), 0);
  for (const LinkPerturbation& p : perturbations.links) {
    if (p.fail) continue;
    links_[p.link].perturbed_at = p.at;
    links_[p.link].extra_latency = p.extra_latency;
    link_rate_[p.link] = p.rate > 0 ? p.rate : fabric.link(p.link).rate;
  }
  for (LinkId l = 0; l < fabric.link_count(); ++l) {
    const topo::Link& link = fabric.link(l);
    LinkState& state = links_[l];
    state.from = link.from;
    state.to = link.to;
    state.latency = link.latency;
    state.source_here = sim.owns(link.from);
    state.cell_time = transmit_time(options.cell_size, link.rate);
    if (link_rate_[l] > 0)
      state.perturbed_cell_time = transmit_time(options.cell_size, link_rate_[l]);
    state.credit_pace = static_cast<double>(std::max(link.rate, link_rate_[l])) / (8.0 * kSecond);
  }
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
  inbound_.resize(fabric.gpu_count());
  for (work::GpuId g = 0; g < fabric.gpu_count(); ++g) {
    inbound_[g] =
        options.deliver_on_send && switch_links[g] == 1 ? switch_of[g] : fabric.gpu_node(g);
  }
  for (LinkId l = 0; l < fabric.link_count() && options.deliver_on_send; ++l) {
    const topo::Link& link = fabric.link(l);
    if (fabric.node(link.to).kind != NodeKind::kGpu) continue;
    const NodeKind from = fabric.node(link.from).kind;
    links_[l].delivers =
        from == NodeKind::kNvSwitch ||
        (from == NodeKind::kSwitch && switch_links[fabric.node(link.to).index] == 1);
  }
  gpu_at_.assign(fabric.gpu_count(), kTimeInfinity);
  gpu_slowdown_.assign(fabric.gpu_count(), 1.0);
  for (const GpuPerturbation& p : perturbations.gpus) {
    gpu_at_[p.gpu] = p.at;
    gpu_slowdown_[p.gpu] = p.slowdown;
  }
  for (LinkId l = 0; l < fabric.link_count(); ++l) {
    ports_[l].credits.fill(static_cast<std::int32_t>(options.buffer_per_class));
    ports_[l].fail_at = router_.fail_at(l);
  }
  number_gpu_ports(options);
  if (binning_) {
    // A column per link sent on here; the counters' width from the most any of
    // them can carry in a bin (cells start back to back, the last one whole).
    std::vector<std::uint32_t> column_of(fabric.link_count(), LinkBins::kNoColumn);
    std::uint32_t columns = 0;
    BitsPerSecond fastest = 0;
    for (LinkId l = 0; l < fabric.link_count(); ++l) {
      if (!sim.owns(fabric.link(l).from)) continue;
      column_of[l] = columns++;
      fastest = std::max({fastest, fabric.link(l).rate, link_rate_[l]});
    }
    bins_ = LinkBins(std::move(column_of), columns, options.link_util_bin,
                     link_util_bin_bytes(fastest, options), link_util_rows(fabric, options));
  }
}

std::uint64_t Network::link_util_bin_bytes(BitsPerSecond fastest, const NetworkOptions& options) {
  // Cells start back to back, the last one whole.
  const long double most =
      static_cast<long double>(fastest) * static_cast<long double>(options.link_util_bin) / 8e12L +
      static_cast<long double>(options.cell_size);
  return most >= 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(most);
}

std::uint64_t Network::link_util_rows(const topo::Fabric& fabric, const NetworkOptions& options) {
  // From the whole fabric's links, not a rank's: the same on every rank, so
  // the bins widen at the same simulated time on any partition.
  return options.link_util_memory /
         (std::uint64_t{4} * std::max<std::uint64_t>(fabric.link_count(), 1));
}

std::uint64_t Network::estimate_link_util_bytes(const topo::Fabric& fabric,
                                                const NetworkOptions& options,
                                                const Perturbations& perturbations,
                                                std::uint64_t links_here, Time end) {
  if (!options.record || options.link_util_bin <= 0 || options.link_util_top == 0) return 0;
  BitsPerSecond fastest = 0;
  for (LinkId l = 0; l < fabric.link_count(); ++l) fastest = std::max(fastest, fabric.link(l).rate);
  for (const LinkPerturbation& p : perturbations.links) fastest = std::max(fastest, p.rate);
  const std::uint64_t max_rows = std::max(link_util_rows(fabric, options), LinkBins::kMinRows);
  const std::uint64_t bins = LinkBins::estimate_bytes(
      links_here, options.link_util_bin, link_util_bin_bytes(fastest, options), max_rows, end);
  // At the end, the busiest links' bins in 64-bit counters: this rank's, and
  // rank 0's sum of all ranks'.
  const std::uint64_t rows =
      end == kTimeInfinity
          ? max_rows
          : std::min(max_rows, static_cast<std::uint64_t>(end / options.link_util_bin) + 2);
  const std::uint64_t top = std::min<std::uint64_t>(options.link_util_top, fabric.link_count());
  return bins + 2 * top * rows * sizeof(std::uint64_t);
}

void Network::number_gpu_ports(const NetworkOptions& options) {
  // GPUs that relay other GPUs' cells to their NIC (PXN): a relayed cell takes
  // its turn with the GPU's own, so their ports never burst.
  const std::uint32_t per_server = fabric_.gpus_per_server();
  std::vector<std::uint8_t> relays(fabric_.gpu_count(), 0);
  gpu_min_key_.assign(fabric_.gpu_count(), UINT32_MAX);
  for (std::uint32_t f = 0; f < dag_.flows().size(); ++f) {
    const work::Flow& flow = dag_.flows()[f];
    gpu_min_key_[flow.src] = std::min(gpu_min_key_[flow.src], flow_key_[f]);
    if (flow.src / per_server != flow.dst / per_server &&
        !fabric_.shares_plane(flow.src, flow.dst)) {
      relays[fabric_.relay_for(flow.src, flow.dst)] = 1;
    }
  }
  for (work::GpuId g = 0; g < fabric_.gpu_count(); ++g) {
    const auto out = fabric_.out_links(fabric_.gpu_node(g));
    // A GPU with more ports than streams (none built here) numbers the rest
    // as its own, and they do not burst.
    for (std::size_t i = 0; i + 1 < core::kStreams && i < out.size(); ++i) {
      const LinkId l = out[i];
      links_[l].stream = static_cast<std::uint8_t>(i + 1);
      if (options.nic_bursts && options.starvation_after == kTimeInfinity && relays[g] == 0 &&
          router_.fail_at(l) == kTimeInfinity) {
        links_[l].burst = static_cast<std::uint32_t>(bursts_.size());
        bursts_.emplace_back();
      }
    }
  }
}

void Network::push_own(LinkId link, std::uint32_t key, std::uint32_t flow,
                       const core::Simulator& sim) {
  KeyedFlows& own = own_[link].flows;
  const LinkState& state = links_[link];
  const Burst* burst = state.burst != kNoBurst ? &bursts_[state.burst] : nullptr;
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
    const Numbers numbers = numbers_of(link, burst->first + sent - 1);
    const std::uint64_t event =
        core::make_tiebreak(state.from, numbers.stream, numbers.first + kFreeSlot);
    if (at > now || (at == now && event > sim.current_tiebreak())) break;
    ++sent;
  }
  // It goes behind the flows those sent, ahead of those the later ones served last.
  std::size_t behind = 0;
  for (std::uint32_t i = burst->tail; i > 0 && burst->last[i - 1] > sent; --i) ++behind;
  own.insert(key, flow, behind);
}

void Network::initialize() {
  // A failed link's port re-routes what waits there when it goes down.
  for (LinkId l = 0; l < fabric_.link_count(); ++l) {
    const NodeId from = fabric_.link(l).from;
    if (router_.fail_at(l) != kTimeInfinity && sim_.owns(from)) {
      sim_.act_as(from);
      sim_.send(from, router_.fail_at(l), tag(kLinkFailed, l), 0);
    }
  }
  ready_.clear();
  runner_.initial(ready_);
  initializing_ = true;  // each GPU's start-up sends are numbered as its own
  act(ready_, sim_, false);
  initializing_ = false;
}

void Network::act(work::DagRunner::Ready& ready, core::Simulator& sim, bool by_comm) {
  // Taken out first (into buffers that keep their capacity): starting a group
  // never makes more ready, but `ready` is refilled by the next completion.
  acting_tasks_.assign(ready.tasks.begin(), ready.tasks.end());
  acting_groups_.assign(ready.groups.begin(), ready.groups.end());
  ready.clear();
  for (const std::uint32_t t : acting_tasks_) {
    const work::GpuId g = dag_.tasks()[t].gpu;
    Gpu& gpu = gpus_[g];
    if (by_comm && !gpu.computing && gpu.ready.empty()) {
      const Time waited = sim.now() - gpu.idle_since;
      gpu.comm_wait += waited;
      gpu_iteration_wait_[std::size_t{g} * iterations_ + dag_.tasks()[t].labels.iteration] +=
          waited;
    }
    gpu.ready.push(t);
    if (initializing_) sim.act_as(gpu_node(g));
    start_compute(g, sim);
  }
  for (const std::uint32_t group : acting_groups_) {
    const Time start = dag_.coflows()[runner_.group(group).coflow].earliest_start;
    const work::GpuId g = runner_.group(group).gpu;
    if (initializing_) sim.act_as(gpu_node(g));
    if (start > sim.now()) {
      sim.send(gpu_node(g), start - sim.now(), tag(kGroupStart), group);
    } else {
      start_group(group, sim);
    }
  }
}

void Network::start_compute(work::GpuId g, core::Simulator& sim) {
  Gpu& gpu = gpus_[g];
  if (gpu.computing || gpu.ready.empty()) return;
  const std::uint32_t t = gpu.ready.front();
  gpu.ready.pop();
  gpu.computing = true;
  task_start_[t] = sim.now();
  Time duration = dag_.tasks()[t].duration;
  if (sim.now() >= gpu_at_[g]) {
    duration = static_cast<Time>(std::llround(static_cast<double>(duration) * gpu_slowdown_[g]));
  }
  gpu.busy += duration;
  sim.send(gpu_node(g), duration, tag(kComputeDone), t);
}

void Network::start_group(std::uint32_t group, core::Simulator& sim) {
  const work::SenderGroup& g = runner_.group(group);
  for (const std::uint32_t f : g.flows) {
    const work::Flow& flow = dag_.flows()[f];
    flow_start_[f] = sim.now();
    to_send_[f] = flow.bytes;
    const LinkId link = router_.first_link(f, sim.now());
    push_own(link, flow_key_[f], f, sim);
    ports_[link].has_own = true;
    if (options_.starvation_after != kTimeInfinity) {
      last_served_[f] = sim.now();
      sim.send(gpu_node(g.gpu), options_.starvation_after, tag(kPromote, link), f);
    }
    try_send(gpu_node(g.gpu), link, sim);
  }
}

bool Network::send_own(NodeId node, LinkId link, core::Simulator& sim) {
  Port& port = ports_[link];
  KeyedFlows& own = own_[link].flows;
  for (std::size_t g = 0;
       g < own.groups();) {  // keys in order; a key without credit lets the next go
    const std::uint32_t f = own.front(g);
    if (to_send_[f] == 0 || flow_key_[f] != own.key(g)) {
      own.pop(g);  // promoted away or done: a stale entry
      port.has_own = !own.empty();
      continue;
    }
    // A flow the starvation guard promoted goes in class 0 all the way.
    const int c = flow_key_[f] == 0 && !last_served_.empty() ? 0 : flow_class_[f];
    const Bytes bytes = std::min(options_.cell_size, to_send_[f]);
    if (port.credits[c] < bytes) {
      ++g;
      continue;
    }
    to_send_[f] -= bytes;
    if (!last_served_.empty()) last_served_[f] = sim.now();
    if (to_send_[f] > 0) {
      own.rotate(g);  // round robin among the flows of one key
    } else {
      own.pop(g);
      port.has_own = !own.empty();
    }
    transmit(node, link, c, {f, static_cast<std::uint32_t>(bytes), topo::kNoLink, 0, sim.now()},
             sim);
    return true;
  }
  return false;
}

[[gnu::always_inline]] inline void Network::occupy(LinkId link, int cls, Bytes bytes, Time start,
                                                   Time serialize) {
  Port& port = ports_[link];
  port.busy_until = start + serialize;
  if (options_.record) {
    tallies_[link].bytes[static_cast<std::size_t>(cls)] += static_cast<std::uint64_t>(bytes);
    busy_time_[link] += static_cast<std::uint64_t>(serialize);
    if (binning_) bins_.add(link, start, static_cast<std::uint64_t>(bytes));  // where it starts
  }
  port.credits[cls] -= static_cast<std::int32_t>(bytes);
  if (port.credits[cls] < 0) [[unlikely]] {
    violated("link " + std::to_string(link) + " class " + std::to_string(cls) +
             " sent a cell without credit");
  }
}

[[gnu::always_inline]] inline Time Network::start_own_cell(LinkId link, int cls, std::uint32_t flow,
                                                           Bytes bytes, Time at, Numbers numbers,
                                                           core::Simulator& sim) {
  const bool slow = perturbed(link, at);
  const Time serialize = serialization(link, bytes, slow);
  occupy(link, cls, bytes, at, serialize);
  send_as(sim, numbers, kHeadSlot, links_[link].to, at + latency(link, slow) - sim.now(),
          tag(kCellHead, link), cell_payload(flow, slow, false, cls, bytes, 0));
  return at + serialize;
}

bool Network::send_own_burst(NodeId node, LinkId link, core::Simulator& sim) {
  KeyedFlows& own = own_[link].flows;
  const std::uint32_t key = own.key(0);
  // A flow of a lower key may start at this GPU meanwhile and go first.
  if (key != gpu_min_key_[gpu_of(node)]) return send_own(node, link, sim);
  Port& port = ports_[link];
  Burst& burst = bursts_[links_[link].burst];
  const std::size_t flows = own.group_size(0);
  const Time now = sim.now();
  // Cells that start within the link's latency: further ahead, the events
  // they send wait in the queue longer than one per cell would have
  // (docs/performance.md, twelfth measurement).
  const Time horizon = saturating_add(now, links_[link].latency);
  std::size_t limit = kMaxBurst;
  std::size_t count = 0;
  Numbers numbers;
  Time at = now;
  // Until `at`, nothing can change what the port sends: credits only grow, no
  // cell is relayed here, a flow that starts has this key or a higher one and
  // joins the back of the turn (push_own puts it where it would have been).
  while (count < limit && !own.empty() && own.key(0) == key && at < sim.end_time() &&
         (count == 0 || at < horizon)) {
    const std::uint32_t f = own.front(0);
    if (to_send_[f] == 0 || flow_key_[f] != key) break;  // stale: send_own drops it
    const int c = flow_class_[f];
    const Bytes bytes = std::min(options_.cell_size, to_send_[f]);
    if (port.credits[c] < bytes) break;
    to_send_[f] -= bytes;
    const bool stay = to_send_[f] > 0;
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
      burst.first = own_[link].sent;
    }
    numbers = take_numbers(link);
    burst.start[count] = at;
    // Where it stays, it went to the back of the turn. (The first flow, sent
    // again last, is placed by that; push_own never counts its first place.)
    if (stay) burst.last[burst.tail++] = static_cast<std::uint8_t>(count + 1);
    at = start_own_cell(link, c, f, bytes, at, numbers, sim);
    ++count;
  }
  if (count == 0) return send_own(node, link, sim);
  burst.key = key;
  burst.count = static_cast<std::uint32_t>(count);
  if (port.queued != 0 || port.has_own) {  // more to send: wake when the last cell has left
    port.free_pending = true;
    send_as(sim, numbers, kFreeSlot, node, at - now, tag(kPortFree, link), 0);
  }
  return true;
}

[[gnu::always_inline]] inline bool Network::send_queued(NodeId node, LinkId link, int c,
                                                        core::Simulator& sim) {
  Port& port = ports_[link];
  PortQueues::Turn& turn = port.turns[static_cast<std::size_t>(c)];
  const Cell cell = queues_.front(turn);
  if (port.credits[c] < static_cast<std::int32_t>(cell.bytes)) return false;
  queues_.pop(turn, link, c);
  if (turn.empty()) port.queued &= static_cast<std::uint8_t>(~(1u << c));
  if (count_queued_) --queued_cells_[link];
  transmit(node, link, c, cell, sim);
  return true;
}

// Inline, so that a cell built by the caller reaches its pool node from registers
// (core/event_buffer.hpp says why a copy through memory costs).
[[gnu::always_inline]] inline void Network::enqueue(LinkId out, int cls, const Cell& cell) {
  Port& port = ports_[out];
  if (count_queued_) ++queued_cells_[out];
  port.queued |= static_cast<std::uint8_t>(1u << cls);
  queues_.push(port.turns[static_cast<std::size_t>(cls)], out, cls, cell);
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
    Numbers last;
    if (links_[link].stream != 0) last = numbers_of(link, own_[link].sent - 1);
    send_as(sim, last, kFreeSlot, node, port.busy_until - sim.now(), tag(kPortFree, link), 0);
    return;
  }
  if (!own) {
    send_any_queued(node, link, sim);
  } else if (port.queued == 0) {
    if (links_[link].burst != kNoBurst) {
      send_own_burst(node, link, sim);
    } else {
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
  const std::uint32_t flow = cell.flow;
  const Bytes bytes = cell.bytes;
  const Time tail_in = cell.tail;
  const LinkId in_link = cell.in_link;
  const Time now = sim.now();
  const bool slow = perturbed(link, now);
  const Time serialize = serialization(link, bytes, slow);
  // Cut-through: start once the head is here, but not so early as to finish
  // before the tail arrives. Store-and-forward: start once the tail is here.
  const Time ready = options_.cut_through ? tail_in - serialize : tail_in;
  const Time start = std::max(now, ready);
  const Time finish = start + serialize;
  occupy(link, cls, bytes, start, serialize);
  const Numbers numbers = take_numbers(link);
  Port& port = ports_[link];
  // More to send: wake when this cell has left. A switch sends that first, as
  // it always has; a GPU's port last, its events in the order of their numbers.
  const bool wake = port.queued != 0 || port.has_own;
  if (wake) port.free_pending = true;
  if (wake && numbers.stream == 0) {
    sim.send(node, finish - now, tag(kPortFree, link), 0);
  }
  const LinkState& state = links_[link];
  const Time head = start + latency(link, slow);
  bool last = false;
  if (!state.delivers || head >= sim.end_time() ||
      !delivered(link, cls, flow, bytes, head + serialize, slow, last, sim)) {
    send_as(sim, numbers, kHeadSlot, state.to, head - now, tag(kCellHead, link),
            cell_payload(flow, slow, last, cls, bytes, cell.hop));
  }
  if (in_link != topo::kNoLink) {
    // The cell leaves this node's ingress buffer as its tail leaves: credit upstream.
    return_credit(in_link, cls, bytes, finish - now + latency(in_link, perturbed(in_link, now)),
                  sim, numbers);
  }
  if (wake && numbers.stream != 0) {
    send_as(sim, numbers, kFreeSlot, node, finish - now, tag(kPortFree, link), 0);
  }
}

[[gnu::always_inline]] inline void Network::add_credit(LinkId link, int cls, Bytes bytes) {
  std::int32_t& credits = ports_[link].credits[static_cast<std::size_t>(cls)];
  credits += static_cast<std::int32_t>(bytes);
  if (credits > options_.buffer_per_class) [[unlikely]] {
    violated("link " + std::to_string(link) + " class " + std::to_string(cls) +
             " got credit beyond its buffer (" + std::to_string(credits) + " bytes)");
  }
}

[[gnu::always_inline]] inline bool Network::credit_early(LinkId in_link, int cls, Bytes bytes,
                                                         Time arrival, Time from,
                                                         core::Simulator& sim) {
  const LinkState& state = links_[in_link];
  if (!options_.early_credits || !state.source_here) return false;
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
                      2.0 * static_cast<double>(options_.cell_size) + 64.0;
  if (port.fail_at != kTimeInfinity || arrival >= sim.end_time() ||
      static_cast<double>(port.credits[cls] - port.early_bytes) < need) {
    return false;
  }
  add_credit(in_link, cls, bytes);
  port.early_bytes += static_cast<std::int32_t>(bytes);
  port.early_until = std::max(port.early_until, arrival);
  return true;
}

[[gnu::always_inline]] inline void Network::return_credit(LinkId in_link, int cls, Bytes bytes,
                                                          Time delay, core::Simulator& sim,
                                                          Numbers numbers) {
  // The upstream node acts next no earlier than the engine's floor for it (now, in time order).
  if (credit_early(in_link, cls, bytes, sim.now() + delay, sim.floor(links_[in_link].from), sim)) {
    return;
  }
  send_as(sim, numbers, kCreditSlot, links_[in_link].from, delay, tag(kCredit, in_link),
          (std::uint64_t(cls) << 32) | static_cast<std::uint64_t>(bytes));
}

bool Network::take_arrival(const core::Event& ev, core::Simulator& sim) {
  if ((ev.tag & 15) != kCredit) return false;
  return credit_early(ev.tag >> 4, static_cast<int>(ev.payload >> 32),
                      static_cast<Bytes>(ev.payload & 0xFFFFFFFF), ev.time,
                      sim.floor(links_[ev.tag >> 4].from), sim);
}

void Network::evacuate(NodeId node, LinkId link, core::Simulator& sim) {
  Port& port = ports_[link];
  const Time now = sim.now();
  for (int c = 0; c < kClasses; ++c) {
    // Cells waiting here take another way from this node (they are still in its
    // ingress buffer, so no credit moves); flows move to another NIC port.
    PortQueues::Turn& turn = port.turns[static_cast<std::size_t>(c)];
    while (!turn.empty()) {
      const Cell cell = queues_.front(turn);
      queues_.pop(turn, link, c);
      if (count_queued_) --queued_cells_[link];
      enqueue(router_.next_link(node, cell.flow, now, sim.rng()), c, cell);
    }
  }
  KeyedFlows& own = own_[link].flows;
  while (!own.empty()) {
    const std::uint32_t f = own.front(0);
    const bool live = to_send_[f] > 0 && flow_key_[f] == own.key(0);
    own.pop(0);
    if (live) {
      const LinkId other = router_.first_link(f, now);
      push_own(other, flow_key_[f], f, sim);
      ports_[other].has_own = true;
    }
  }
  port.has_own = false;
  port.queued = 0;
  for (const LinkId other : fabric_.out_links(node)) {
    if (other != link) try_send(node, other, sim);
  }
}

bool Network::delivered(LinkId link, int cls, std::uint32_t flow, Bytes bytes, Time tail, bool slow,
                        bool& last, core::Simulator& sim) {
  const work::Flow& f = dag_.flows()[flow];
  if (gpu_of(links_[link].to) != f.dst) return false;  // relayed (PXN) on from there
  // The last cell ends its flow at the receiver, in an event of the receiver's
  // own (ordered there as before among its tasks' events).
  if (count_received(flow, bytes, f)) {
    last = true;
    return false;
  }
  // The receiver would return the credit as the tail arrives; added early (or
  // else the cell goes as an event and the receiver returns it).
  // The port is this node's own: it acts next at or after now.
  if (!credit_early(link, cls, bytes, tail + latency(link, slow), sim.now(), sim)) return false;
  ++cell_hops_;
  return true;
}

bool Network::count_received(std::uint32_t flow, Bytes bytes, const work::Flow& f) {
  received_[flow] += bytes;
  if (received_[flow] > f.bytes) {
    throw Error("conservation: flow " + std::to_string(flow) + " received " +
                std::to_string(received_[flow]) + " of " + std::to_string(f.bytes) + " bytes");
  }
  return received_[flow] == f.bytes;
}

topo::NodeId Network::counted_at(std::uint32_t f) const {
  const work::Flow& flow = dag_.flows()[f];
  const std::uint32_t per_server = fabric_.gpus_per_server();
  // Inside a server: by NVLink from its NVSwitch, on the receiver's rank.
  if (flow.src / per_server == flow.dst / per_server) return gpu_node(flow.dst);
  return inbound_[flow.dst];
}

[[gnu::always_inline]] inline void Network::on_cell_head(const core::Event& ev,
                                                         core::Simulator& sim) {
  ++cell_hops_;
  const LinkId in_link = ev.tag >> 4;
  const CellHead head = CellHead::unpack(ev.payload);
  const std::uint32_t flow = head.flow;
  const Bytes bytes = head.bytes;
  const bool slow = head.slow;  // as the sender transmitted it
  const Time tail = sim.now() + serialization(in_link, bytes, slow);
  const NodeId here = ev.target;
  const work::Flow& f = dag_.flows()[flow];
  const int cls = head.cls;  // the class it was sent in
  const topo::Node& node = fabric_.node(here);
  if (node.kind == NodeKind::kGpu && gpu_of(here) == f.dst) {
    // At the receiver: the NIC takes the cell as its tail arrives. Over a link
    // that delivers, its bytes were counted where the link starts.
    bool last = head.last;
    if (!links_[in_link].delivers) last = count_received(flow, bytes, f);
    return_credit(in_link, cls, bytes, tail - sim.now() + latency(in_link, slow), sim, Numbers{});
    if (last) sim.send(here, tail - sim.now(), tag(kFlowReceived), flow);
    return;
  }
  LinkId out = remembered_route(ev);
  if (out == topo::kNoLink) out = router_.next_link(here, flow, sim.now(), sim.rng());
  const Cell cell{flow, static_cast<std::uint32_t>(bytes), in_link, head.hop + 1, tail};
  Port& port = ports_[out];
  if (port.queued == 0 && !port.has_own && !port.free_pending && sim.now() >= port.busy_until &&
      port.credits[cls] >= bytes) {
    transmit(here, out, cls, cell, sim);  // an idle port: what queueing would do, without the queue
    return;
  }
  enqueue(out, cls, cell);
  try_send(here, out, sim);
}

void Network::handle(const core::Event& ev, core::Simulator& sim) {
  switch (static_cast<Kind>(ev.tag & 15)) {
    case kCellHead:
      on_cell_head(ev, sim);
      return;
    case kPortFree: {
      const LinkId link = ev.tag >> 4;
      ports_[link].free_pending = false;
      try_send(ev.target, link, sim);
      return;
    }
    case kCredit: {
      const LinkId link = ev.tag >> 4;
      add_credit(link, static_cast<int>(ev.payload >> 32),
                 static_cast<Bytes>(ev.payload & 0xFFFFFFFF));
      try_send(ev.target, link, sim);
      return;
    }
    case kFlowReceived: {
      const auto flow = static_cast<std::uint32_t>(ev.payload);
      const work::Flow& f = dag_.flows()[flow];
      if (flow_end_[flow] >= 0) [[unlikely]]
        violated("flow " + std::to_string(flow) + " ended twice");
      flow_end_[flow] = sim.now();
      runner_.flow_done_at(f.dst, flow, ready_);
      // The acknowledgement returns along the path (its latency, no queueing).
      sim.send(gpu_node(f.src), fabric_.path_latency(f.dst, f.src), tag(kFlowAck), flow);
      act(ready_, sim, true);
      return;
    }
    case kFlowAck: {
      const auto flow = static_cast<std::uint32_t>(ev.payload);
      const work::Flow& f = dag_.flows()[flow];
      if (options_.record) {
        // The receiver's end time, known here exactly: the ack took the path's latency.
        flow_records_.push_back({flow, flow_coflow_[flow], f.src, f.dst, f.bytes, flow_start_[flow],
                                 sim.now() - fabric_.path_latency(f.dst, f.src)});
        flow_recorded_[flow] = 1;
      }
      runner_.flow_done_at(f.src, flow, ready_);
      act(ready_, sim, true);
      return;
    }
    case kComputeDone: {
      const auto task = static_cast<std::uint32_t>(ev.payload);
      const work::ComputeTask& t = dag_.tasks()[task];
      const work::GpuId g = t.gpu;
      if (task_end_[task] >= 0) [[unlikely]]
        violated("task " + std::to_string(task) + " ended twice");
      task_end_[task] = sim.now();
      if (options_.record) {
        const work::TaskLabels& l = t.labels;
        compute_records_.push_back({task, g, l.job, l.iteration, l.micro_batch, l.layer,
                                    static_cast<std::uint8_t>(l.kind), task_start_[task],
                                    sim.now()});
        task_recorded_[task] = 1;
      }
      gpus_[g].computing = false;
      runner_.task_done(task, ready_);
      act(ready_, sim, false);
      start_compute(g, sim);
      if (!gpus_[g].computing) gpus_[g].idle_since = sim.now();
      return;
    }
    case kGroupStart:
      start_group(static_cast<std::uint32_t>(ev.payload), sim);
      return;
    case kLinkFailed:
      evacuate(ev.target, ev.tag >> 4, sim);
      return;
    case kPromote: {
      // The starvation guard: a flow its NIC has not served for the threshold
      // goes first there (its cells keep their class in switches).
      const auto f = static_cast<std::uint32_t>(ev.payload);
      const LinkId link = ev.tag >> 4;
      if (to_send_[f] == 0 || flow_key_[f] == 0 || ports_[link].fail_at <= sim.now()) return;
      const Time starving_at = last_served_[f] + options_.starvation_after;
      if (starving_at > sim.now()) {  // served meanwhile: look again a threshold after that
        sim.send(ev.target, starving_at - sim.now(), tag(kPromote, link), f);
        return;
      }
      flow_key_[f] = 0;
      own_[link].flows.push(0, f);  // its old entry is skipped as stale
      ports_[link].has_own = true;
      try_send(ev.target, link, sim);
      return;
    }
  }
  throw Error("internal: unknown network event kind " + std::to_string(ev.tag & 15));
}

void Network::violated(const std::string& what) const {
  throw Error("invariant violated at " + format_time(sim_.now()) + ": " + what);
}

void Network::check_ports() const {
  for (topo::LinkId l = 0; l < fabric_.link_count(); ++l) {
    if (!sim_.owns(fabric_.link(l).from)) continue;
    const Port& port = ports_[l];
    std::int64_t cells = 0;
    for (int c = 0; c < kClasses; ++c) {
      const std::size_t in_class = queues_.count(port.turns[static_cast<std::size_t>(c)]);
      cells += static_cast<std::int64_t>(in_class);
      if ((in_class != 0) != (((port.queued >> c) & 1) != 0)) {
        violated("link " + std::to_string(l) + " class " + std::to_string(c) +
                 ": the queued-class bit disagrees with its " + std::to_string(in_class) +
                 " cells");
      }
      if (!queues_.lanes_found_again(port.turns[static_cast<std::size_t>(c)], l, c)) {
        violated("link " + std::to_string(l) + " class " + std::to_string(c) +
                 ": a lane holds cells of another flow or hop, or its key finds another lane");
      }
      if (port.credits[c] < 0 || port.credits[c] > options_.buffer_per_class) {
        violated("link " + std::to_string(l) + " class " + std::to_string(c) + " holds " +
                 std::to_string(port.credits[c]) + " bytes of credit, outside 0.." +
                 std::to_string(options_.buffer_per_class));
      }
    }
    if (port.has_own == own_[l].flows.empty()) {
      violated("link " + std::to_string(l) + ": the own-flows flag disagrees with its " +
               std::to_string(own_[l].flows.groups()) + " key groups");
    }
    if (count_queued_ && cells != queued_cells_[l]) {
      violated("link " + std::to_string(l) + " counts " + std::to_string(queued_cells_[l]) +
               " queued cells and holds " + std::to_string(cells));
    }
  }
}

void Network::check_end_state() const {
  check_ports();
  for (topo::LinkId l = 0; l < fabric_.link_count(); ++l) {
    if (!sim_.owns(fabric_.link(l).from)) continue;
    const Port& port = ports_[l];
    for (int c = 0; c < kClasses; ++c) {
      if (port.credits[c] != options_.buffer_per_class) {
        violated("at the end, link " + std::to_string(l) + " class " + std::to_string(c) + " has " +
                 std::to_string(port.credits[c]) + " of " +
                 std::to_string(options_.buffer_per_class) + " bytes of credit back");
      }
    }
    if (port.queued != 0 || !own_[l].flows.empty()) {
      violated("at the end, link " + std::to_string(l) + " still holds cells or flows");
    }
  }
  for (std::uint32_t f = 0; f < dag_.flows().size(); ++f) {
    const work::Flow& flow = dag_.flows()[f];
    if (sim_.owns(counted_at(f)) && received_[f] != flow.bytes) {
      violated("conservation: flow " + std::to_string(f) + " received " +
               std::to_string(received_[f]) + " of " + std::to_string(flow.bytes) + " bytes");
    }
  }
}

void Network::record_unfinished() {
  if (!options_.record) return;
  for (std::uint32_t f = 0; f < dag_.flows().size(); ++f) {
    const work::Flow& flow = dag_.flows()[f];
    if (flow_recorded_[f] != 0 || !sim_.owns(gpu_node(flow.src))) continue;
    const Time start = flow_start_[f] == kTimeInfinity ? -1 : flow_start_[f];
    flow_records_.push_back({f, flow_coflow_[f], flow.src, flow.dst, flow.bytes, start, -1});
  }
  for (std::uint32_t t = 0; t < dag_.tasks().size(); ++t) {
    const work::ComputeTask& task = dag_.tasks()[t];
    if (task_recorded_[t] != 0 || !sim_.owns(gpu_node(task.gpu))) continue;
    const work::TaskLabels& l = task.labels;
    const Time start = task_start_[t] == kTimeInfinity ? -1 : task_start_[t];
    compute_records_.push_back({t, task.gpu, l.job, l.iteration, l.micro_batch, l.layer,
                                static_cast<std::uint8_t>(l.kind), start, -1});
  }
}

RunResults Network::results(const core::Comm& comm) {
  RunResults r;
  auto gather = [&](const std::vector<Time>& mine, bool earliest, std::vector<Time>& out) {
    out.assign(comm.rank() == 0 ? mine.size() : 0, 0);
    if (earliest) {
      comm.min_to_root(mine, out);
    } else {
      comm.max_to_root(mine, out);
    }
  };
  gather(flow_start_, true, r.flow_start);
  gather(flow_end_, false, r.flow_end);
  gather(task_start_, true, r.task_start);
  gather(task_end_, false, r.task_end);
  std::vector<Time> busy(gpus_.size()), wait(gpus_.size());
  for (std::size_t g = 0; g < gpus_.size(); ++g) {
    busy[g] = gpus_[g].busy;
    wait[g] = gpus_[g].comm_wait;
  }
  gather(busy, false, r.gpu_busy);  // each GPU's figures are non-zero on its rank only
  gather(wait, false, r.gpu_comm_wait);
  gather(gpu_iteration_wait_, false, r.gpu_iteration_wait);
  r.iterations = iterations_;
  Bytes delivered = 0;
  for (const Bytes b : received_) delivered += b;
  r.bytes_delivered = comm.sum(delivered);
  r.cell_hops = comm.sum(cell_hops_);
  std::vector<std::uint64_t> link_bytes, link_busy;
  if (options_.record) {
    link_bytes.reserve(tallies_.size() * kClasses);
    link_busy.reserve(tallies_.size());
    for (LinkId l = 0; l < tallies_.size(); ++l) {
      link_bytes.insert(link_bytes.end(), tallies_[l].bytes.begin(), tallies_[l].bytes.end());
      link_busy.push_back(busy_time_[l]);
    }
    r.link_bytes.assign(comm.rank() == 0 ? link_bytes.size() : 0, 0);
    comm.sum_to_root(link_bytes, r.link_bytes);
    r.link_busy.assign(comm.rank() == 0 ? link_busy.size() : 0, 0);
    comm.sum_to_root(link_busy, r.link_busy);
  }
  if (binning_) {
    // Every rank learns every link's total (each link is counted on one rank),
    // so all pick the same busiest links; their bins are summed onto rank 0.
    std::vector<std::uint64_t> total(fabric_.link_count(), 0), all(fabric_.link_count(), 0);
    for (topo::LinkId l = 0; l < fabric_.link_count(); ++l) {
      for (const std::uint64_t b : tallies_[l].bytes) total[l] += b;
    }
    // A rank whose links went quiet early may have widened less: all take the widest.
    bins_.widen_to(static_cast<Time>(comm.max(static_cast<std::int64_t>(bins_.width()))));
    r.link_util_width = bins_.width();  // on every rank: the file's attribute is collective
    std::uint64_t bins = bins_.rows();
    comm.sum_all(total, all);
    bins = static_cast<std::uint64_t>(comm.max(static_cast<std::int64_t>(bins)));
    std::vector<topo::LinkId> order(fabric_.link_count());
    for (topo::LinkId l = 0; l < order.size(); ++l) order[l] = l;
    const std::size_t top = std::min<std::size_t>(options_.link_util_top, order.size());
    std::partial_sort(
        order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
        [&](topo::LinkId a, topo::LinkId b) { return all[a] != all[b] ? all[a] > all[b] : a < b; });
    order.resize(top);
    std::vector<std::uint64_t> mine(top * bins, 0);
    for (std::size_t i = 0; i < top; ++i) {
      bins_.column(order[i], std::span(mine).subspan(i * bins, bins));
    }
    r.link_util_bytes.assign(comm.rank() == 0 ? mine.size() : 0, 0);
    comm.sum_to_root(mine, r.link_util_bytes);
    if (comm.rank() == 0) {
      r.link_util_links = order;
      r.link_util_bins = bins;
    }
  }
  return r;
}

}  // namespace shoal::net
