// The [output] table of a run config (docs/output.md).
#pragma once

#include "shoal/config/config_file.hpp"
#include "shoal/exec/run_setup.hpp"

namespace shoal::output {

/// file (relative to the config's directory), flows, and the /link_util
/// bins (link_util_bin, link_util_top, link_util_memory, into setup.network).
/// An Error names the file and key.
void read_output_table(config::ConfigFile& config, exec::RunSetup& setup);

}  // namespace shoal::output
