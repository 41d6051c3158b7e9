// The network's share of the resource guard's estimate, and the event order
// it runs fastest in: decided from the fabric and the options alone, before
// anything is built.
#include <algorithm>

#include "shoal/net/network.hpp"

namespace shoal::net {

std::uint64_t Network::estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                      const NetworkOptions& options, const RankShare& share) {
  // The bytes received of the flows in progress (the router keeps nothing per
  // flow): a table for a sixty-fourth of the rank's flows at once, where the
  // flagship's training runs peak near one in two hundred, and a bit for each
  // flow it holds.
  const std::uint64_t received =
      ReceivedBytes::estimate_bytes(dag.held_count(), share.flows_sent / 64);
  const std::uint64_t per_node = 64 + 32;  // the engine's entity core and its queue share
  return received + Nic::estimate_bytes(dag, options, share) +
         Ports::estimate_bytes(fabric, dag, options, share.links) + fabric.node_count() * per_node;
}

core::EventOrder Network::event_order_for(const topo::Fabric& fabric,
                                          const NetworkOptions& options) {
  const core::Layout& layout = fabric.layout();
  if (options.instant || layout.links().size() < kAtomOrderLinks) return core::EventOrder::kTime;
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

}  // namespace shoal::net
