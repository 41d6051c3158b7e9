// A pilot run: the workload on the instant network with latency (a flow
// arrives its path's latency after it starts), to learn when each GPU is
// busy. It runs the executor's own semantics (dependencies, one task at a
// time per GPU, stragglers), so a pipeline's stages come out staggered as
// they will be; only the network's bandwidth and queues are left out. It runs
// on every rank of the run, each rank its own GPUs under pilot_partition, so
// no rank holds the whole DAG's dependency state. The weighted partition
// balances what it finds (topo/load_partition.hpp).
#pragma once

#include <cstddef>

#include "shoal/core/comm.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/units.hpp"
#include "shoal/exec/model.hpp"
#include "shoal/net/network_options.hpp"
#include "shoal/net/rank_share.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/topo/load_partition.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::exec {

struct PilotLoad {
  topo::GpuLoad load;
  Time span = 0;             // the pilot's simulated time, over which the slices lie
  std::int64_t events = 0;   // the pilot's events
  std::int64_t windows = 0;  // the pilot's, for the log
  double loop_seconds = 0;   // its simulator's loop, of the time it took
};

/// Collective over `comm`: each GPU's load in `slices` equal slices of the
/// pilot's time, on every rank: a flow adds its cells (its bytes over
/// `network.cell_size`, at least one) to its sender and to its receiver in the
/// slice where it starts, a compute task one to its GPU where it starts. The
/// same for any number of ranks. It stops at `end` (the run's end time): a
/// run cut short is balanced for what it runs.
PilotLoad pilot_load(const core::Comm& comm, const topo::Fabric& fabric, const work::Dag& dag,
                     const net::NetworkOptions& network, const Perturbations& perturbations,
                     std::uint64_t seed, std::size_t slices, Time end = kTimeInfinity);

/// The partition the pilot runs under on `ranks` ranks: the weighted
/// partition's units (a leaf with its servers) dealt to the ranks in turn
/// (topo::units_in_turn). Each pipeline stage's leaves are then spread over
/// the ranks, which are busy at the same times; `topology`'s blocks held
/// whole stages, and its pilot on 2 ranks ran no faster than on one. The
/// pilot's loads are the same under any partition.
core::Partition pilot_partition(const topo::Fabric& fabric, int ranks);

/// Bytes the pilot's model will allocate on a rank that holds `share` under
/// pilot_partition (Model::estimate_bytes of the model pilot_load builds):
/// the resource guard's estimate for it.
std::uint64_t pilot_estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                   const net::NetworkOptions& network, const net::RankShare& share);

}  // namespace shoal::exec
