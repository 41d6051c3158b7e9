#include "shoal/output/output_config.hpp"

#include <filesystem>

#include "shoal/core/error.hpp"

namespace shoal::output {

void read_output_table(config::ConfigFile& config, exec::RunSetup& setup) {
  const std::string prefix = "config " + config.path() + ": ";
  constexpr std::string_view o = "output";
  if (const auto out = config.string(o, "file")) {
    const std::filesystem::path p(*out);
    setup.output = p.is_absolute()
                       ? p.string()
                       : (std::filesystem::path(config.path()).parent_path() / p).string();
  }
  setup.output_flows = config.boolean(o, "flows").value_or(true);
  // Input files up to this size are stored whole in /meta/inputs (docs/output.md).
  if (const auto limit = config.bytes(o, "embed_limit")) {
    if (*limit < 0) throw Error(prefix + "output.embed_limit must not be negative");
    setup.embed_limit = static_cast<std::uint64_t>(*limit);
  }
  // Time-binned utilisation of the busiest links (docs/output.md).
  setup.network.link_util_bin = config.time(o, "link_util_bin").value_or(100 * kMicrosecond);
  if (setup.network.link_util_bin <= 0) {
    throw Error(prefix + "output.link_util_bin must be positive");
  }
  const std::int64_t top = config.integer(o, "link_util_top").value_or(20);
  if (top < 0 || top > UINT32_MAX) {
    throw Error(prefix + "output.link_util_top must be between 0 and " +
                std::to_string(UINT32_MAX));
  }
  setup.network.link_util_top = static_cast<std::uint32_t>(top);
  if (const auto memory = config.bytes(o, "link_util_memory")) {
    if (*memory <= 0) throw Error(prefix + "output.link_util_memory must be positive");
    setup.network.link_util_memory = static_cast<std::uint64_t>(*memory);
  }
}

}  // namespace shoal::output
