// The "weighted" partition: servers, and the switches their NICs reach, placed
// on ranks so that every rank has a like share of the work in each stretch of
// the run, not just over the whole run. A training job's pipeline stages are
// busy at different times; a partition balanced only in total (a rank per pair
// of stages, say) leaves one rank waiting on the other in every window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shoal/core/partition.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::topo {

/// The work a run puts on each GPU in each of `slices` equal stretches of
/// its time: load[gpu * slices + slice], in any unit (events, cells).
struct GpuLoad {
  std::size_t slices = 0;
  std::vector<std::uint64_t> load;
};

/// Units (nic_units: a leaf with its servers, loaded with its GPUs' load;
/// other switches spread round-robin) largest first, each to the rank whose load so far
/// overlaps its own least (the smallest sum over slices of the two products): that keeps the sum
/// over slices and ranks of the squared rank loads small, which is the time ranks spend waiting on
/// one another. Ties go to the rank with the least load, then the fewest units, then the lowest
/// number. Where the units dealt in turn (units_in_turn) give no larger sum, they are kept
/// instead: the pilot ran under them. Described as "weighted".
core::Partition partition_by_load(const Fabric& fabric, int ranks, const GpuLoad& load);

/// The weighted strategy's units dealt to the ranks in turn, unit u to rank
/// u mod ranks (other switches spread round-robin): a pipeline stage's
/// leaves, which lie together, go to every rank, so the ranks are busy at
/// the same times. The weighted partition's pilot runs under it. Described
/// as "units in turn".
core::Partition units_in_turn(const Fabric& fabric, int ranks);

}  // namespace shoal::topo
