// Job files (jobs/*.toml): [model], [moe], [parallelism], [gpu], [skew], [schedule]
// (docs/training.md). Every mistake is one line naming the file and key.
#pragma once

#include <string>
#include <string_view>

#include "shoal/config/config_file.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::work {

/// Reads a job file (not yet resolved against a fabric).
JobSpec read_job_file(const std::string& path);

/// Applies the parallelism, skew, GPU and schedule keys present in `table` of another
/// config (a run config's [job] table) on top of `job`.
void apply_job_overrides(config::ConfigFile& config, std::string_view table, JobSpec& job);

}  // namespace shoal::work
