// A run config read on every rank: fabric, partition, workload (a file, a
// generator or training jobs), network options, policies, perturbations,
// milestones, engine options. Shared by `shoal run`, `traffic` and `dag`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shoal/core/partition.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/net/network.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::cli {

/// A time the report names: "NAME.start" / "NAME.end" of a task or coflow,
/// "phase-end" (the last task or flow end) or "last-byte" (the last flow end).
struct Milestone {
  std::string label;
  std::string at;
};

/// Everything a run needs, read from the config on every rank.
struct RunSetup {
  std::vector<sched::PolicyConfig> policies;  // one, or several to compare
  std::vector<Milestone> milestones;
  std::optional<topo::Fabric> fabric;
  std::optional<core::Partition> partition;
  work::Dag dag;
  net::NetworkOptions network;
  net::Perturbations perturbations;
  std::vector<work::JobSpec> jobs;  // training jobs, when the workload is generated from them
  core::EngineOptions engine;
  std::string workload;
  std::string config_path;
  std::string output;                  // [output] file (an -o option replaces it)
  bool output_flows = true;            // [output] flows: the per-flow table
  std::vector<std::string> overrides;  // --set (or a sweep point's), recorded in /meta
  std::string sweep_point;             // "SWEEP.toml:NAME" when a sweep runs the config
  std::uint64_t memory_limit = 0;      // [run] memory_limit: bytes per rank (0: the node's)
};

/// The partition `spec` names for `ranks` ranks: a strategy (topology, block,
/// round-robin) or else a partition file, relative to the directory of
/// `config_path` unless absolute, checked against the fabric and rank count.
core::Partition fabric_partition(const topo::Fabric& fabric, int ranks, const std::string& spec,
                                 const std::string& config_path);

/// Reads and checks everything; an Error names the file and key. `ranks`
/// sizes the partition.
void read_config(const std::string& path, const std::vector<std::string>& overrides, int ranks,
                 RunSetup& setup);

}  // namespace shoal::cli
