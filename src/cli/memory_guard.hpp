// The resource guard: before the network and the engine are built, the memory
// they will take is estimated and compared with what this node has free (or
// with [run] memory_limit), so a run that cannot fit stops with the numbers
// instead of being killed by the OOM killer hours later (docs/reliability.md).
#pragma once

#include <cstdint>
#include <functional>

#include "run_config.hpp"
#include "shoal/exec/recorder.hpp"

namespace shoal::cli {

/// What a run's recorder keeps: coflow times, and with an output file
/// (`record`) its compute rows and, when [output] flows, its flow rows.
exec::RecorderOptions recording_for(const RunSetup& setup, bool record);

/// Throws an Error when rank `rank`'s resident memory plus the estimates (the
/// network's and engine's, its /link_util bins') exceeds `limit` (per rank, 0:
/// none), or when those times the ranks on this node
/// (core::Comm::ranks_on_node) exceed the memory the node, or the job's
/// cgroup, has available. `scratch`: where the /link_util bins settle (the
/// output file's folder; empty: they stay in memory); an Error too when all
/// ranks' bins would not fit in the space free there.
void check_memory(int rank, int ranks_on_node, const RunSetup& setup, bool record,
                  std::uint64_t limit, const std::string& scratch = {});

/// The guard before a weighted partition's pilot run (exec/pilot.hpp) on
/// `ranks` ranks, which builds a model of rank `rank`'s share of the workload:
/// an Error when its estimate, with what is resident, passes
/// setup.memory_limit, or times setup.ranks_on_node passes what the node has
/// available.
void check_pilot_memory(int rank, int ranks, const RunSetup& setup);

/// The same guard while read_config builds the workload's DAG (which every
/// rank holds whole): a check for work::Dag::set_growth_check that throws an
/// Error once this rank's resident memory, with the array the DAG is about to
/// grow, would pass setup.memory_limit, or once what the DAG has taken and is
/// about to take, times the ranks on this node, would pass what the node had
/// available when the build began. `setup` must outlive the build.
work::Dag::GrowthCheck dag_growth_guard(int ranks_on_node, const RunSetup& setup);

}  // namespace shoal::cli
