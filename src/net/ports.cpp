#include "shoal/net/ports.hpp"

#include <algorithm>
#include <string>

namespace shoal::net {

using topo::LinkId;

std::vector<Time> Ports::failure_times(const topo::Fabric& fabric,
                                       std::span<const LinkPerturbation> perturbations) {
  std::vector<Time> at(fabric.link_count(), kTimeInfinity);
  for (const LinkPerturbation& p : perturbations) {
    if (p.fail) at[p.link] = std::min(at[p.link], p.at);
  }
  return at;
}

std::uint32_t Ports::lane_hops(const topo::Fabric& fabric, const NetworkOptions& options,
                               std::span<const LinkPerturbation> perturbations, std::size_t flows) {
  // A flow's cells that are h links into their path wait at one port and
  // class only where routes never change: ECMP (not spraying), no link that
  // fails, no starvation guard (a promoted flow's cells change class); the
  // instant network queues no cells at all. A table too large for the DAG's
  // flows gives way to the hash (NetworkOptions::lanes_by_hop_max_bytes).
  const bool failures = std::any_of(perturbations.begin(), perturbations.end(),
                                    [](const LinkPerturbation& p) { return p.fail; });
  const std::uint32_t hops = fabric.longest_route();
  if (options.instant || !options.lanes_by_hop || !options.switch_round_robin ||
      options.load_balancing != LoadBalancing::kEcmp || failures ||
      options.starvation_after != kTimeInfinity || hops > kMaxHops ||
      PortQueues::by_hop_bytes(flows, hops) > options.lanes_by_hop_max_bytes) {
    return 0;
  }
  return hops;
}

PortQueues Ports::make_queues(const topo::Fabric& fabric, const work::Dag& dag,
                              const NetworkOptions& options,
                              std::span<const LinkPerturbation> perturbations) {
  if (!options.switch_round_robin) return PortQueues::fifo();
  const std::uint32_t hops = lane_hops(fabric, options, perturbations, dag.flow_count());
  return hops == 0 ? PortQueues::hashed() : PortQueues::by_hop(dag.flow_count(), hops);
}

Ports::Ports(const topo::Fabric& fabric, const work::Dag& dag, const core::Simulator& sim,
             const NetworkOptions& options, std::span<const LinkPerturbation> perturbations)
    : fabric_(fabric),
      sim_(sim),
      cell_size_(options.cell_size),
      buffer_per_class_(options.buffer_per_class),
      early_credits_(options.early_credits),
      recording_(options.record),
      count_queued_(options.load_balancing == LoadBalancing::kAdaptive),
      ports_(fabric.link_count()),
      queues_(make_queues(fabric, dag, options, perturbations)),
      links_(fabric.link_count()),
      perturbed_rate_(fabric.link_count(), 0),
      queued_cells_(fabric.link_count(), 0) {
  for (const LinkPerturbation& p : perturbations) {
    if (p.fail) continue;
    perturbed_rate_[p.link] = p.rate > 0 ? p.rate : fabric.link(p.link).rate;
  }
  const std::vector<Time> fail_at = failure_times(fabric, perturbations);
  for (LinkId l = 0; l < fabric.link_count(); ++l) {
    const topo::Link& link = fabric.link(l);
    if (!holds_link(l)) continue;
    LinkState& state = links_.construct(l);
    state.from = link.from;
    state.to = link.to;
    state.latency = link.latency;
    state.source_here = sim.owns(link.from);
    state.cell_time = transmit_time(options.cell_size, link.rate);
    if (perturbed_rate_[l] > 0) {
      state.perturbed_cell_time = transmit_time(options.cell_size, perturbed_rate_[l]);
    }
    state.credit_pace =
        static_cast<double>(std::max(link.rate, perturbed_rate_[l])) / (8.0 * kSecond);
    if (!state.source_here) continue;
    Port& port = ports_.construct(l);
    port.credits.fill(static_cast<std::int32_t>(options.buffer_per_class));
    port.fail_at = fail_at[l];
  }
  for (const LinkPerturbation& p : perturbations) {
    if (p.fail || !holds_link(p.link)) continue;
    links_[p.link].perturbed_at = p.at;
    links_[p.link].extra_latency = p.extra_latency;
  }
  if (options.record) {
    meters_ = LinkMeters(
        fabric, options, [&](LinkId l) { return sim.owns(fabric.link(l).from); }, perturbed_rate_);
  }
}

std::int64_t Ports::check(LinkId l) const {
  const Port& port = ports_[l];
  std::int64_t cells = 0;
  for (int c = 0; c < kClasses; ++c) {
    const PortQueues::Turn& turn = port.turns[static_cast<std::size_t>(c)];
    const std::size_t in_class = queues_.count(turn);
    cells += static_cast<std::int64_t>(in_class);
    // Called after every window: the message is built only for a violation.
    auto where = [&] { return "link " + std::to_string(l) + " class " + std::to_string(c); };
    if ((in_class != 0) != (((port.queued >> c) & 1) != 0)) {
      invariant_violated(sim_.now(), where() + ": the queued-class bit disagrees with its " +
                                         std::to_string(in_class) + " cells");
    }
    if (!queues_.lanes_found_again(turn, l, c)) {
      invariant_violated(sim_.now(),
                         where() +
                             ": a lane holds cells of another flow or hop, or its key finds "
                             "another lane");
    }
    if (port.credits[c] < 0 || port.credits[c] > buffer_per_class_) {
      invariant_violated(sim_.now(), where() + " holds " + std::to_string(port.credits[c]) +
                                         " bytes of credit, outside 0.." +
                                         std::to_string(buffer_per_class_));
    }
  }
  return cells;
}

void Ports::check_drained(LinkId l) const {
  const Port& port = ports_[l];
  for (int c = 0; c < kClasses; ++c) {
    if (port.credits[c] != buffer_per_class_) {
      invariant_violated(sim_.now(),
                         "at the end, link " + std::to_string(l) + " class " + std::to_string(c) +
                             " has " + std::to_string(port.credits[c]) + " of " +
                             std::to_string(buffer_per_class_) + " bytes of credit back");
    }
  }
  if (port.queued != 0) {
    invariant_violated(sim_.now(), "at the end, link " + std::to_string(l) + " still holds cells");
  }
}

std::uint64_t Ports::estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                    const NetworkOptions& options, std::uint64_t links_here) {
  // Cells in flight wait at their sender's port and are bounded by its
  // credits: a class's buffer per link; most links carry one or two classes
  // at a time. The instant network queues none.
  const std::uint64_t cells_per_link =
      options.instant ? 0
                      : 2 * static_cast<std::uint64_t>(options.buffer_per_class /
                                                       std::max<Bytes>(options.cell_size, 1));
  // The meters' counters are kept for the links the rank sends on. A link's
  // state is kept where the rank holds either end: about twice the links it
  // sends on.
  const std::uint64_t every_link = sizeof(BitsPerSecond) + sizeof(std::int32_t);
  const std::uint64_t link_sent_on =
      sizeof(Port) + (options.record ? LinkMeters::kBytesPerLink : 0) +
      cells_per_link * (sizeof(core::Event) + PortQueues::kMaxBytesPerCell);
  // Lanes found by hop: a slot per flow of the DAG and hop (counted as if no
  // link fails), on every rank: a switch forwards cells of flows it does not hold.
  const std::uint64_t lane_slots =
      PortQueues::by_hop_bytes(dag.flow_count(), lane_hops(fabric, options, {}, dag.flow_count()));
  return fabric.link_count() * every_link + links_here * (2 * sizeof(LinkState) + link_sent_on) +
         lane_slots;
}

}  // namespace shoal::net
