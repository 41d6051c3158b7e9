#include "shoal/exec/fragment.hpp"

#include <cstdint>
#include <vector>

#include "shoal/net/network.hpp"

namespace shoal::exec {

RankFlows keep_rank_flows(const topo::Fabric& fabric, work::Dag& dag,
                          const net::NetworkOptions& network, const core::Partition& partition,
                          int rank) {
  if (partition.ranks() == 1) return {dag.flow_count(), false};
  const std::vector<std::int32_t> owner = partition.entity_ranks(fabric.layout());
  const std::vector<topo::NodeId> inbound = net::Network::inbound_nodes(fabric, network);
  const auto mine = [&](const work::Flow& f) {
    return owner[fabric.gpu_node(f.src)] == rank || owner[fabric.gpu_node(f.dst)] == rank ||
           owner[net::Network::counted_at(fabric, inbound, f.src, f.dst)] == rank;
  };
  std::size_t held = 0;
  for (const work::Flow& f : dag.all_flows()) held += mine(f);
  // A rank taking part in most flows keeps them all: the destinations it
  // would add outweigh the flows it would drop.
  if (dag.fragment_bytes(held) >= dag.flow_count() * sizeof(work::Flow)) {
    return {dag.flow_count(), false};
  }
  dag.keep_flows(mine);
  return {held, true};
}

}  // namespace shoal::exec
