// The sub-commands of the shoal executable, each registered on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "shoal/core/comm.hpp"

namespace shoal::cli {

/// Options every command sees.
struct GlobalOptions {
  std::string log_level = "info";
  bool quiet = false;
};

/// --progress-interval's check: a positive number of seconds.
inline CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          if (std::stod(text, &used) > 0 && used == text.size()) return {};
        } catch (const std::exception&) {
        }
        return "must be a positive number of seconds, not " + text;
      },
      "SECONDS>0");
}

/// An output's check: a file name, not an empty string (which would read as
/// "no output" and write nothing).
inline CLI::Validator file_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "needs a file name, not an empty string" : std::string();
      },
      "FILE");
}

/// The command to run once parsing succeeded; returns the exit code.
using Action = std::function<int(const core::Comm&)>;

/// What `shoal run` simulates; `shoal sweep` fills it for each point.
struct RunArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string output;
  bool force = false;
  double progress_interval = 5.0;
  std::string sweep_point;  // recorded in /meta; a sweep point runs one policy
  bool check = false;       // the full invariants (Debug builds check them anyway)
  // `shoal rerun`: the files the config names, read from copies; the output it
  // repeats; and what /meta calls the config (its copy is temporary).
  std::map<std::string, std::string> input_map;
  std::string rerun_of;
  std::string config_label;
};

/// Reads the config on every rank, simulates each policy and reports; returns
/// the exit code (0, 1 for an error, 3 when stopped by a signal).
int run_simulation(const core::Comm& world, const RunArgs& args, const GlobalOptions& global);

void add_phold_commands(CLI::App& bench, CLI::App& partition, const GlobalOptions& global,
                        Action& action);
void add_version_command(CLI::App& app, Action& action);
void add_scale_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_mpi_costs_command(CLI::App& app, Action& action);
void add_workload_commands(CLI::App& app, Action& action);
void add_topo_command(CLI::App& app, Action& action);
/// `shoal partition fabric`: a fabric config's partition as a file.
void add_partition_fabric_command(CLI::App& partition, Action& action);
void add_run_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_training_commands(CLI::App& app, Action& action);
/// `shoal rerun FILE.h5 -o NEW.h5`: the run again from what FILE.h5 keeps.
void add_rerun_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_sweep_command(CLI::App& app, const GlobalOptions& global, Action& action);

}  // namespace shoal::cli
