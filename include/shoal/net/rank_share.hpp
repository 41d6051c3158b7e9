// What one rank of a run keeps of the network, for the resource guard's
// estimate: each rank builds only the ports of the links it sends on and the
// per-flow slots of the flows its GPUs send, so the estimate counts those,
// not the whole fabric's and DAG's.
#pragma once

#include <cstdint>
#include <span>

#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::net {

struct RankShare {
  std::uint64_t flows_sent = 0;  // flows its GPUs send
  std::uint64_t links = 0;       // links from its nodes: the ports it builds
  std::uint64_t gpus = 0;        // its GPUs

  /// A run on one rank: every link and GPU, and every flow of `dag` (whole).
  static RankShare whole(const topo::Fabric& fabric, const work::Dag& dag);
  /// Rank `rank`'s share where `owner` gives each of the fabric's nodes its
  /// rank (core::Partition::entity_ranks). `dag` holds at least the flows
  /// this rank's GPUs send (a whole DAG or this rank's fragment).
  static RankShare of(const topo::Fabric& fabric, const work::Dag& dag,
                      std::span<const std::int32_t> owner, int rank);
};

}  // namespace shoal::net
