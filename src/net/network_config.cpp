#include "shoal/net/network_config.hpp"

#include "shoal/core/error.hpp"

namespace shoal::net {

NetworkOptions read_network_options(config::ConfigFile& config) {
  const std::string prefix = "config " + config.path() + ": ";
  constexpr std::string_view n = "network";
  NetworkOptions options;
  const std::string model = config.string(n, "model").value_or("packet");
  if (model != "packet" && model != "instant") {
    throw Error(prefix + "network.model must be \"packet\" or \"instant\"");
  }
  options.instant = model == "instant";
  options.cell_size = config.bytes(n, "cell_size").value_or(options.cell_size);
  options.buffer_per_class = config.bytes(n, "buffer_per_class").value_or(options.buffer_per_class);
  const std::string forwarding = config.string(n, "forwarding").value_or("cut-through");
  if (forwarding != "cut-through" && forwarding != "store-and-forward") {
    throw Error(prefix + "network.forwarding must be \"cut-through\" or \"store-and-forward\"");
  }
  options.cut_through = forwarding == "cut-through";
  const std::string balancing = config.string(n, "load_balancing").value_or("ecmp");
  if (balancing == "ecmp") {
    options.load_balancing = LoadBalancing::kEcmp;
  } else if (balancing == "spray") {
    options.load_balancing = LoadBalancing::kSpray;
  } else if (balancing == "adaptive") {
    options.load_balancing = LoadBalancing::kAdaptive;
  } else {
    throw Error(prefix + "network.load_balancing must be \"ecmp\", \"spray\" or \"adaptive\"");
  }
  const std::string scheduling = config.string(n, "switch_scheduling").value_or("round-robin");
  if (scheduling != "round-robin" && scheduling != "fifo") {
    throw Error(prefix + "network.switch_scheduling must be \"round-robin\" or \"fifo\"");
  }
  options.switch_round_robin = scheduling == "round-robin";
  try {
    validate(options);
  } catch (const Error& e) {
    throw Error(prefix + e.what());
  }
  return options;
}

}  // namespace shoal::net
