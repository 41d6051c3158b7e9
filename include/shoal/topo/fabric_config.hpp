// The [topology] table of a run config, and what `shoal topo` reports.
#pragma once

#include <string>
#include <vector>

#include "shoal/config/config_file.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::topo {

/// Builds the fabric described by [topology] (keys in docs/topologies.md).
Fabric build_fabric(config::ConfigFile& config);

/// "4:1" -> 4. An Error names the text otherwise.
std::uint32_t parse_oversubscription(std::string_view text);

/// Partition strategies that know the fabric: "topology" keeps each leaf (in a
/// 3-tier fat tree, each pod) with its servers, balanced in contiguous blocks,
/// and spreads the switches above round-robin; with fewer leaves (pods) than
/// ranks, each server is a unit and every switch is spread. "block" and
/// "round-robin" are the engine's strategies over atoms. "weighted" is named
/// here but made from a workload (topo/load_partition.hpp, cli::place_weighted).
/// Whether `name` is one of partition_fabric's strategies.
bool is_partition_strategy(std::string_view name);
core::Partition partition_fabric(const Fabric& fabric, int ranks, std::string_view strategy);

/// The partition `spec` names for `ranks` ranks: a strategy (topology, block,
/// round-robin) or else the partition file at `file` (the path `spec` names,
/// resolved by the caller), checked against the fabric and rank count.
core::Partition fabric_partition(const Fabric& fabric, int ranks, const std::string& spec,
                                 const std::string& file);

struct LevelSummary {
  std::string name;  // leaf, spine, core
  std::uint32_t switches = 0;
  std::uint32_t down_ports = 0;  // per switch, the largest
  std::uint32_t up_ports = 0;
  double oversubscription = 0;  // down capacity / up capacity over the level; 0 at the top
};

struct FabricSummary {
  GpuId gpus = 0;
  std::uint32_t servers = 0;
  std::vector<LevelSummary> levels;
  std::vector<std::pair<std::string, std::uint32_t>> links_per_tier;  // duplex links
  BitsPerSecond bisection = 0;  // half the capacity of the thinnest tier of up links
};

FabricSummary summarize(const Fabric& fabric);

}  // namespace shoal::topo
