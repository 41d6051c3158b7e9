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
/// sizes the partition, except a weighted one for more than one rank, which
/// place_weighted makes afterwards (its pilot is collective), or one `setup`
/// holds already. With setup.fragment_rank set on several ranks, the DAG is
/// that rank's fragment (exec/fragment.hpp) under that partition, or under
/// the pilot's while a weighted one waits; the rule its fragments share is
/// then left to exec::check_sender_dependencies. `input_map`
/// reads files the config names from other paths (ConfigFile::map_inputs);
/// messages name the config `shown_as` where given.
void read_config(const std::string& path, const std::vector<std::string>& overrides, int ranks,
                 RunSetup& setup, const std::map<std::string, std::string>& input_map = {},
                 const std::string& shown_as = {});

/// A sweep point runs one policy: an Error (`what`: the point, as the message
/// begins, or "" where the caller names it) when the config compares several.
void require_one_policy(const RunSetup& setup, const std::string& what);

/// read_config on one rank under the guard `shoal run` puts on the DAG's
/// growth (dag_growth_guard): a workload too large for the memory stops
/// with a message.
void read_config_guarded(const std::string& path, const std::vector<std::string>& overrides,
                         int ranks_on_node, RunSetup& setup);

/// The slices of a pilot run's time that the weighted partition balances.
inline constexpr std::size_t kPilotSlices = 64;

/// Collective over `comm`: where read_config left the weighted partition
/// (topo/load_partition.hpp) for `ranks` ranks to make, runs its pilot
/// (weighted_pilot) on the ranks of `comm` and makes it. False, with the first
/// failing rank's error printed, where the pilot's memory guard refuses; an
/// error in the pilot itself stops every rank (run_or_abort). With
/// `pilot_kept`, says whether it placed the ranks of `comm` as their pilot
/// ran (exec::pilot_partition): then the fragments it ran on are the run's.
bool place_weighted(const core::Comm& comm, RunSetup& setup, int ranks, bool* pilot_kept = nullptr);

/// Collective over `comm`: the pilot run behind the weighted partition
/// (exec/pilot.hpp, kPilotSlices slices), each rank of `comm` running its
/// share; the same loads for any number of ranks. The caller checks its
/// memory first (check_pilot_memory).
exec::PilotLoad weighted_pilot(const core::Comm& comm, const RunSetup& setup);

}  // namespace shoal::cli
