// A pilot run: the workload on the instant network (flows arrive the moment
// they start), on this rank alone, to learn when each GPU is busy. It runs
// the executor's own semantics (dependencies, one task at a time per GPU,
// stragglers), so a pipeline's stages come out staggered as they will be;
// only the network's time is left out. The weighted partition balances what
// it finds (topo/load_partition.hpp).
#pragma once

#include <cstddef>

#include "shoal/core/units.hpp"
#include "shoal/exec/model.hpp"
#include "shoal/net/network_options.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/topo/load_partition.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::exec {

struct PilotLoad {
  topo::GpuLoad load;
  Time span = 0;            // the pilot's simulated time, over which the slices lie
  std::int64_t events = 0;  // the pilot's events
};

/// Each GPU's load in `slices` equal slices of the pilot's time: a flow adds
/// its cells (its bytes over `network.cell_size`, at least one) to its sender
/// and to its receiver in the slice where it starts, a compute task one to
/// its GPU where it starts.
PilotLoad pilot_load(const topo::Fabric& fabric, const work::Dag& dag,
                     const net::NetworkOptions& network, const Perturbations& perturbations,
                     std::uint64_t seed, std::size_t slices);

/// Bytes the pilot's model will allocate (Model::estimate_bytes of the model
/// pilot_load builds): the resource guard's estimate for it.
std::uint64_t pilot_estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                   const net::NetworkOptions& network);

}  // namespace shoal::exec
