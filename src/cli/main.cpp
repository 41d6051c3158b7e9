// shoal: the command-line entry point. Every rank parses the same arguments;
// only rank 0 prints help and results.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "commands.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/core/fatal_signal.hpp"
#include "shoal/core/free_heap.hpp"
#include "shoal/output/build_info.hpp"

namespace {

void setup_logging(const shoal::core::Comm& world, const shoal::cli::GlobalOptions& global) {
  auto logger = spdlog::stderr_color_mt("shoal");
  if (world.size() > 1) {
    logger->set_pattern("[%H:%M:%S.%e] [rank " + std::to_string(world.rank()) + "] [%^%l%$] %v");
  } else {
    logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  }
  spdlog::set_default_logger(logger);
  spdlog::set_level(global.quiet ? spdlog::level::warn : spdlog::level::from_str(global.log_level));
}

}  // namespace

namespace shoal::cli {

void add_version_command(CLI::App& app, Action& action) {
  CLI::App* version =
      app.add_subcommand("version", "Print the versions of Shoal and its libraries");
  version->callback([&action] {
    action = [](const core::Comm& world) {
      if (world.rank() != 0) return 0;
      const output::BuildInfo info = output::build_info();
      std::printf("shoal %s (commit %s)\n", info.shoal_version.c_str(), info.git_commit.c_str());
      std::printf("HDF5 %s (%s)\n", info.hdf5_version.c_str(),
                  info.hdf5_parallel ? "parallel" : "serial");
      std::printf("MPI: %s\n", info.mpi_library.c_str());
      std::printf("Boost %s\n", info.boost_version.c_str());
      return 0;
    };
  });
}

}  // namespace shoal::cli

int main(int argc, char** argv) {
  shoal::core::map_large_blocks();
  shoal::core::MpiSession mpi(argc, argv);
  const shoal::core::Comm world = shoal::core::Comm::world();
  shoal::core::install_fatal_signal_handlers(world.rank());

  CLI::App app(
      "Shoal: a parallel discrete-event simulator of large-model training traffic on GPU "
      "fabrics.\nRun it under mpirun for several ranks; results are identical for any rank count.",
      "shoal");
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the sub-command, as users type them
  shoal::cli::GlobalOptions global;
  app.add_option("--log-level", global.log_level,
                 "Log level: trace, debug, info, warn, error, critical, off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_flag("-q,--quiet", global.quiet, "No progress lines or info logs");

  shoal::cli::Action action;
  CLI::App* bench = app.add_subcommand("bench", "Engine benchmarks");
  bench->require_subcommand(1);
  CLI::App* partition = app.add_subcommand("partition", "Write a partition file for a model");
  partition->require_subcommand(1);
  shoal::cli::add_phold_commands(*bench, *partition, global, action);
  shoal::cli::add_partition_fabric_command(*partition, action);
  shoal::cli::add_run_command(app, global, action);
  shoal::cli::add_sweep_command(app, global, action);
  shoal::cli::add_rerun_command(app, global, action);
  shoal::cli::add_training_commands(app, action);
  shoal::cli::add_topo_command(app, action);
  shoal::cli::add_workload_commands(app, action);
  shoal::cli::add_scale_command(app, global, action);
  shoal::cli::add_mpi_costs_command(app, action);
  shoal::cli::add_version_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every rank parsed the same arguments and fails alike: no collective needed.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return world.rank() == 0 ? app.exit(e) : 0;  // --help
    }
    if (world.rank() == 0) {
      std::string message = e.what();
      // CLI11 reads a mistyped command as a missing one; say which word it did not know.
      const bool unknown =
          argc > 1 && argv[1][0] != '-' &&
          app.get_subcommands([&](const CLI::App* c) { return c->check_name(argv[1]); }).empty();
      if (unknown) {
        message = std::string("unknown subcommand \"") + argv[1] + "\"";
      }
      shoal::cli::print_error(message + " (see shoal --help)");
    }
    return 2;
  }
  setup_logging(world, global);
  return action(world);
}
