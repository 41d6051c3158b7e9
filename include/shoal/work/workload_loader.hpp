// Reading a workload whatever its format: the one place that picks the reader.
#pragma once

#include <string>
#include <string_view>

#include "shoal/work/dag.hpp"

namespace shoal::work {

/// `format`: "toml", "json" (both the DAG format of docs/workloads.md), "htsim"
/// (a connection matrix), "chakra" (a Chakra trace: `path` is DIR/NAME for the
/// files NAME.0.et ... in DIR, read with the default ChakraOptions), or "auto":
/// .toml and .json files by their extension, anything else as an htsim matrix.
/// Adds to `dag` and resolves it.
void load_workload(const std::string& path, std::string_view format, Dag& dag);

}  // namespace shoal::work
