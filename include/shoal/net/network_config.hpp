// The [network] table of a run config (README, "A run config has these tables").
#pragma once

#include "shoal/config/config_file.hpp"
#include "shoal/net/network_options.hpp"

namespace shoal::net {

/// model, cell_size, buffer_per_class, forwarding, load_balancing, switch_scheduling;
/// an Error names the file and key.
NetworkOptions read_network_options(config::ConfigFile& config);

}  // namespace shoal::net
