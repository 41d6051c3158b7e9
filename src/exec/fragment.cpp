#include "shoal/exec/fragment.hpp"

#include <cstdint>
#include <vector>

#include "shoal/exec/run_setup.hpp"
#include "shoal/net/network.hpp"

namespace shoal::exec {

work::DagFragment rank_fragment(const topo::Fabric& fabric, const net::NetworkOptions& network,
                                const core::Partition& partition, int rank) {
  std::vector<std::int32_t> owner = partition.entity_ranks(fabric.layout());
  std::vector<topo::NodeId> inbound = net::Network::inbound_nodes(fabric, network);
  work::DagFragment fragment;
  fragment.gpus = fabric.gpu_count();
  fragment.owns.resize(fabric.gpu_count());
  fragment.concerns.resize(fabric.gpu_count());
  for (work::GpuId g = 0; g < fabric.gpu_count(); ++g) {
    fragment.owns[g] = owner[fabric.gpu_node(g)] == rank;
    // keep() below selects a flow only where its sender, its receiver or its
    // receiver's inbound node (counted_at: the one or the other) is here.
    fragment.concerns[g] = fragment.owns[g] || owner[inbound[g]] == rank;
  }
  fragment.keep = [&fabric, rank, owner = std::move(owner),
                   inbound = std::move(inbound)](const work::Flow& f) {
    return owner[fabric.gpu_node(f.src)] == rank || owner[fabric.gpu_node(f.dst)] == rank ||
           owner[net::Network::counted_at(fabric, inbound, f.src, f.dst)] == rank;
  };
  return fragment;
}

void check_sender_dependencies(const core::Comm& comm, const work::Dag& dag) {
  // A trusted generator's rule (work::Dag::trust_generator).
  if (dag.whole() || dag.trusts_generator()) return;
  const std::vector<std::uint64_t> mine = dag.sender_dependencies();
  std::vector<std::uint64_t> all(mine.size());
  comm.or_all(mine, all);
  dag.check_sender_dependencies(all);
}

void find_milestones(const core::Comm& comm, const work::Dag& dag,
                     std::vector<Milestone>& milestones) {
  if (dag.whole()) return;
  // Each node as its kind and index plus one: 0 where this rank does not
  // find it. Names are unique, so every rank that finds one finds the same.
  auto pack = [](const std::optional<work::NodeRef>& node) -> std::uint64_t {
    if (!node) return 0;
    return (node->kind == work::NodeRef::Kind::kCoflow ? std::uint64_t{1} << 32 : 0) + node->index +
           1;
  };
  std::vector<std::uint64_t> mine(milestones.size()), found(milestones.size());
  for (std::size_t i = 0; i < milestones.size(); ++i) mine[i] = pack(milestones[i].node);
  comm.or_all(mine, found);
  for (std::size_t i = 0; i < milestones.size(); ++i) {
    Milestone& m = milestones[i];
    if (m.at == "phase-end" || m.at == "last-byte") continue;
    if (found[i] == 0) throw milestone_not_found(m);
    const std::uint64_t packed = found[i] - 1;
    m.node = work::NodeRef{
        (packed >> 32) != 0 ? work::NodeRef::Kind::kCoflow : work::NodeRef::Kind::kTask,
        static_cast<std::uint32_t>(packed & 0xffffffffu)};
  }
}

}  // namespace shoal::exec
