// A rank's fragment of the DAG's flows. Each rank of a run on several builds
// its DAG keeping only the flows it sends, receives or counts (the node that
// counts a flow's bytes, net::Network::counted_at, is its receiver or, with
// delivery on send, the switch above it), through work::Dag::set_fragment.
// A cell that reaches a rank holding neither end of its flow brings its
// destination in a note (net/transit_routes.hpp). Every flow the rank
// starts, counts, ends or acknowledges is then held; its NVSwitches turn
// only flows from or to their server, and a GPU relaying a flow (PXN) is in
// its sender's server, an atom no partition splits, so on the sender's rank
// too.
#pragma once

#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/exec/outcomes.hpp"
#include "shoal/net/network_options.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::exec {

/// The flows rank `rank` sends, receives or counts under `partition`, and the
/// GPUs it owns there: what its DAG keeps (work::Dag::set_fragment).
work::DagFragment rank_fragment(const topo::Fabric& fabric, const net::NetworkOptions& network,
                                const core::Partition& partition, int rank);

/// Collective over `comm`: the rule that each of a coflow's dependencies
/// concerns one of its senders, which spans the ranks' fragments
/// (work::Dag::sender_dependencies); an Error names the first coflow that
/// breaks it, on every rank. Nothing for a whole DAG, nor for a fragment
/// whose generator is trusted with it (work::Dag::trust_generator).
void check_sender_dependencies(const core::Comm& comm, const work::Dag& dag);

/// The nodes the milestones name, found by the ranks together where a
/// rank's fragment holds another rank's tasks unnamed (read_milestones); an
/// Error, the same on every rank, names the first that none finds.
void find_milestones(const core::Comm& comm, const work::Dag& dag,
                     std::vector<Milestone>& milestones);

}  // namespace shoal::exec
