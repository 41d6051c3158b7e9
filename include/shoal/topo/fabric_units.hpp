// The units a fabric partition keeps whole: for `topology` a leaf with its
// servers (a pod in a 3-tier fat tree, a segment in a rail-optimized fabric),
// for `weighted` each leaf with its servers (nic_units); each server where
// there are fewer such groups than ranks. Partition strategies place units on
// ranks; switches outside every unit are spread over the ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/core/partition.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::topo {

struct FabricUnits {
  std::int64_t count = 0;
  std::vector<std::int64_t> server_unit;  // by server
  std::vector<std::int64_t> switch_unit;  // by node: a switch's unit, -1 spread (or not a switch)
};

/// The units for a partition over `ranks` ranks; an Error where the fabric
/// cannot fill them (fewer servers than ranks).
FabricUnits fabric_units(const Fabric& fabric, int ranks);

/// The weighted strategy's units: each server joined with the switches its
/// GPUs' NICs reach, and with every server those reach too (a leaf with its
/// servers in a fat tree, a segment in a rail-optimized fabric). A flow's
/// bytes are counted at its receiver's NIC switch, so such units put every
/// flow's sender, receiver and counting node on their GPUs' ranks. Where there
/// are fewer of them than ranks: each server, and each such switch, apart.
/// An Error where the fabric has fewer servers than ranks.
FabricUnits nic_units(const Fabric& fabric, int ranks);

/// The partition that puts unit u on unit_rank[u] and spreads the other
/// switches round-robin, described as `description`.
core::Partition place_units(const Fabric& fabric, const FabricUnits& units, int ranks,
                            const std::vector<std::int32_t>& unit_rank, std::string description);

}  // namespace shoal::topo
