// The TOML workload format (docs/workloads.md): [[task]], [[coflow]] and
// [[pattern]] entries, read into a Dag with errors that name file, line and key.
#pragma once

#include <string>

#include "shoal/work/dag.hpp"

namespace shoal::work {

/// Reads a workload file into `dag` (which may already hold nodes) and resolves
/// its dependencies. Does not check GPU ids against a fabric: call validate().
void load_dag_file(const std::string& path, Dag& dag);

}  // namespace shoal::work
