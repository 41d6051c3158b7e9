// The runs behind `shoal scale` (docs/scaling.md): a config on one rank,
// timed, then on one rank again under a window probe for each lookahead the
// rank counts asked for, to predict what N ranks would do.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "shoal/core/partition.hpp"
#include "shoal/core/scaling_model.hpp"
#include "shoal/exec/run_setup.hpp"

namespace shoal::exec {

/// The one-rank run that prices an event.
struct OneRankRun {
  std::int64_t events = 0;
  double build_seconds = 0;  // the simulator and model, built and initialized
  double loop_seconds = 0;   // the simulation loop (RunSummary::wall_seconds)
};

/// Runs `setup` (its first policy) on this rank alone, as `shoal run` would.
OneRankRun run_one_rank(const RunSetup& setup);

/// Runs `setup` on this rank alone under a window probe of `partitions`
/// (all with the same lookahead); the prediction for each, in order, its
/// work priced by the one-rank loop (run_one_rank's).
std::vector<core::ScalePrediction> probe_partitions(const RunSetup& setup,
                                                    std::span<const core::Partition> partitions,
                                                    const core::ScaleCosts& costs,
                                                    double loop_seconds);

/// A cost file (configs/scale/*.toml): [mpi] and [[allreduce]], and
/// [engine] where it was measured on the machine that runs Shoal.
struct CostFile {
  core::MpiCosts mpi;
  std::optional<core::EngineCosts> engine;
};

/// Reads a cost file; an Error names the file and key.
CostFile read_cost_file(const std::string& path);

}  // namespace shoal::exec
