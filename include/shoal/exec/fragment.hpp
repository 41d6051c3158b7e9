// A rank's fragment of the DAG's flows. Once the partition is placed, each
// rank of a run on several keeps the flows it sends, receives or counts (the
// node that counts a flow's bytes, net::Network::counted_at, is its receiver
// or, with delivery on send, the switch above it) and drops the others
// (work::Dag::keep_flows). Every flow keeps its destination, which is all a
// switch routes by. Every flow the rank starts, counts, ends or acknowledges
// is then held; its NVSwitches turn only flows from or to their server, and a
// GPU relaying a flow (PXN) is in its sender's server, an atom no partition
// splits, so on the sender's rank too.
#pragma once

#include <cstddef>

#include "shoal/core/partition.hpp"
#include "shoal/net/network_options.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::exec {

struct RankFlows {
  std::size_t held = 0;  // the flows the rank holds
  bool dropped = false;  // whether it dropped the others (else it holds all)
};

/// Drops the flows rank `rank` neither sends, receives nor counts under
/// `partition`, where the fragment takes less memory than the whole
/// (Dag::fragment_bytes); on one rank, nothing.
RankFlows keep_rank_flows(const topo::Fabric& fabric, work::Dag& dag,
                          const net::NetworkOptions& network, const core::Partition& partition,
                          int rank);

}  // namespace shoal::exec
