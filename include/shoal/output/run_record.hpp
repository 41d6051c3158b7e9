// What a run's HDF5 file keeps of how it was made (/meta: the resolved config,
// the policy, the input files), read back for `shoal rerun`.
#pragma once

#include <string>
#include <vector>

#include "shoal/config/input_file.hpp"

namespace shoal::output {

struct RunRecord {
  std::string file;             // the HDF5 file read
  std::string config_path;      // where the run read its config
  std::string config_resolved;  // the config as TOML, --set overrides applied
  std::string policy;           // the policy this file holds
  std::string sweep_point;
  bool completed = false;
  std::vector<config::InputSnapshot> inputs;  // contents where embedded
};

/// Reads `path` (serial HDF5, read-only); an Error names the file and what is
/// missing, such as a file written before /meta kept the resolved config.
RunRecord read_run_record(const std::string& path);

}  // namespace shoal::output
