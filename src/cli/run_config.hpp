// A run config read on every rank: each layer reads its own tables
// ([topology] topo, [network] net, [workload] and [job] work, [policy] sched,
// [[perturbation]], [[milestone]] and [run] exec, [output] output); this
// assembles them. Shared by `shoal run`, `sweep`, `traffic` and `dag`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "shoal/exec/pilot.hpp"
#include "shoal/exec/run_setup.hpp"

namespace shoal::cli {

using exec::RunSetup;

/// Reads and checks everything; an Error names the file and key. `ranks`
/// sizes the partition. `input_map` reads files the config names from other
/// paths (ConfigFile::map_inputs); messages name the config `shown_as` where given.
void read_config(const std::string& path, const std::vector<std::string>& overrides, int ranks,
                 RunSetup& setup, const std::map<std::string, std::string>& input_map = {},
                 const std::string& shown_as = {});

/// The slices of a pilot run's time that the weighted partition balances.
inline constexpr std::size_t kPilotSlices = 64;

/// The "weighted" partition (topo/load_partition.hpp) of a read setup for
/// `ranks` ranks, from a pilot run of its workload (exec/pilot.hpp) in
/// kPilotSlices slices; with one rank, no pilot.
core::Partition weighted_partition(const RunSetup& setup, int ranks);

/// The pilot run behind weighted_partition (checked against the memory guard first).
exec::PilotLoad weighted_pilot(const RunSetup& setup);

}  // namespace shoal::cli
