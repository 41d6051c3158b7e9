// The workload DAG format (docs/workloads.md): [[task]], [[coflow]] and
// [[pattern]] entries in TOML (or the same in JSON, for generated files), read
// into a Dag with errors that name file, line (TOML) and key.
#pragma once

#include <string>

#include "shoal/work/dag.hpp"

namespace shoal::work {

/// Reads a workload file into `dag` (which may already hold nodes) and resolves
/// its dependencies. Does not check GPU ids against a fabric: call validate().
/// JSON files hold the same entries: {"task": [...], "coflow": [...], "pattern": [...]}.
void load_dag_file(const std::string& path, Dag& dag, bool json = false);

}  // namespace shoal::work
