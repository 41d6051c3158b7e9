// The sub-commands of the shoal executable, each registered on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "shoal/core/comm.hpp"

namespace shoal::cli {

/// Options every command sees.
struct GlobalOptions {
  std::string log_level = "info";
  bool quiet = false;
};

/// The command to run once parsing succeeded; returns the exit code.
using Action = std::function<int(const core::Comm&)>;

void add_phold_commands(CLI::App& bench, CLI::App& partition, const GlobalOptions& global,
                        Action& action);
void add_version_command(CLI::App& app, Action& action);
void add_workload_commands(CLI::App& app, Action& action);
void add_topo_command(CLI::App& app, Action& action);
void add_run_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_training_commands(CLI::App& app, Action& action);

}  // namespace shoal::cli
