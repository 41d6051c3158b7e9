#include "shoal/exec/fragment.hpp"

#include <cstdint>
#include <vector>

#include "shoal/net/network.hpp"

namespace shoal::exec {

work::DagFragment rank_fragment(const topo::Fabric& fabric, const net::NetworkOptions& network,
                                const core::Partition& partition, int rank) {
  std::vector<std::int32_t> owner = partition.entity_ranks(fabric.layout());
  std::vector<topo::NodeId> inbound = net::Network::inbound_nodes(fabric, network);
  work::DagFragment fragment;
  fragment.gpus = fabric.gpu_count();
  fragment.owns.resize(fabric.gpu_count());
  for (work::GpuId g = 0; g < fabric.gpu_count(); ++g) {
    fragment.owns[g] = owner[fabric.gpu_node(g)] == rank;
  }
  fragment.keep = [&fabric, rank, owner = std::move(owner),
                   inbound = std::move(inbound)](const work::Flow& f) {
    return owner[fabric.gpu_node(f.src)] == rank || owner[fabric.gpu_node(f.dst)] == rank ||
           owner[net::Network::counted_at(fabric, inbound, f.src, f.dst)] == rank;
  };
  return fragment;
}

void check_sender_dependencies(const core::Comm& comm, const work::Dag& dag) {
  if (dag.whole()) return;
  const std::vector<std::uint64_t> mine = dag.sender_dependencies();
  std::vector<std::uint64_t> all(mine.size());
  comm.or_all(mine, all);
  dag.check_sender_dependencies(all);
}

}  // namespace shoal::exec
