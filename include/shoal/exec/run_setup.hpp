// Everything a run needs, read from its config on every rank, and the readers
// of the tables that belong to this layer: [[perturbation]], [[milestone]]
// and [run]. cli::read_config assembles it from every layer's reader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shoal/config/config_file.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/exec/model.hpp"
#include "shoal/exec/outcomes.hpp"
#include "shoal/net/network_options.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::exec {

struct RunSetup {
  std::vector<sched::PolicyConfig> policies;  // one, or several to compare
  std::vector<Milestone> milestones;
  std::optional<topo::Fabric> fabric;
  std::optional<core::Partition> partition;
  std::string partition_spec;  // [run] partition: a strategy, or the file it names (resolved)
  work::Dag dag;
  net::NetworkOptions network;
  Perturbations perturbations;
  std::vector<work::JobSpec> jobs;  // training jobs, when the workload is generated from them
  core::EngineOptions engine;
  std::string workload;
  std::string config_path;
  std::string output;                  // [output] file (an -o option replaces it)
  bool output_flows = true;            // [output] flows: the per-flow table
  std::vector<std::string> overrides;  // --set (or a sweep point's), recorded in /meta
  std::string sweep_point;             // "SWEEP.toml:NAME" when a sweep runs the config
  std::uint64_t memory_limit = 0;      // [run] memory_limit: bytes per rank (0: the node's)
  int ranks_on_node = 1;               // set before reading: the memory guards multiply by it
  // Set before reading: on a run of several ranks, the rank whose fragment of
  // the flows the DAG keeps (exec/fragment.hpp); -1 keeps them all.
  int fragment_rank = -1;
  // For /meta, so that `shoal rerun` can repeat the run from its output alone.
  std::string config_text;                                 // the config file as read
  std::string config_resolved;                             // the config as TOML, overrides applied
  std::uint64_t embed_limit = config::kDefaultEmbedLimit;  // [output] embed_limit
  std::vector<config::InputSnapshot> inputs;               // the files the config named
  std::string rerun_of;                                    // the output a `shoal rerun` repeats
};

/// [[perturbation]]: a slow or long link ("link = \"leaf 0 -> spine 1\"",
/// both directions unless one_way) or a failed one ("fail = true"), or a
/// straggler GPU ("gpu = 5", "slowdown = 2.0"). An Error names the entry.
Perturbations read_perturbations(config::ConfigFile& config, const topo::Fabric& fabric);

/// [[milestone]]: label and at = "NAME.start", "NAME.end" (a task or coflow of
/// `dag`), "phase-end" or "last-byte". In a fragment with unnamed tasks a
/// name it misses stays unfound, for find_milestones.
std::vector<Milestone> read_milestones(config::ConfigFile& config, const work::Dag& dag);
/// The error for a milestone no node is named as.
Error milestone_not_found(const Milestone& m);

/// [run] memory_limit (0 when absent).
std::uint64_t read_memory_limit(config::ConfigFile& config);

/// [run] seed, end and event_order ("auto" picks the faster order for the
/// fabric and cell size, net::Network::event_order_for) into `engine`;
/// returns the partition: a strategy or a partition file.
std::string read_run_table(config::ConfigFile& config, const topo::Fabric& fabric,
                           const net::NetworkOptions& network, core::EngineOptions& engine);

}  // namespace shoal::exec
