// The [workload] table of a run config (docs/workloads.md, docs/training.md):
// a workload file, a generator, or training jobs (with a [job] table of changes).
#pragma once

#include <string>
#include <vector>

#include "shoal/config/config_file.hpp"
#include "shoal/topo/ids.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::work {

struct Workload {
  std::string name;           // the file (resolved), the first job file, or the generator
  std::vector<JobSpec> jobs;  // training jobs, when the workload is generated from them
};

/// Builds the workload into `dag` (which may watch its growth) for a fabric of
/// `gpus` GPUs in servers of `gpus_per_server`, resolved and validated; an
/// Error names the file and key, or the workload file and the node.
Workload read_workload(config::ConfigFile& config, GpuId gpus, std::uint32_t gpus_per_server,
                       Dag& dag);

}  // namespace shoal::work
