// `mpirun -np 2 shoal mpi-costs -o FILE.toml`: measures this machine's MPI
// costs as `shoal scale` prices them (core/comm_costs.hpp) and writes them
// in the format of configs/scale/, ready for `shoal scale --network FILE`.
#include <fmt/format.h>

#include <ctime>
#include <memory>

#include "commands.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/core/comm_costs.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"

namespace shoal::cli {
namespace {

struct MpiCostsArgs {
  std::string output;
  int rounds = 7;
  bool force = false;
};

std::string format_seconds(double s) { return fmt::format("\"{:.3f}us\"", s * 1e6); }

int measure(const core::Comm& world, const MpiCostsArgs& args) {
  bool ok = setup_everywhere(world, [&] {
    if (world.size() < 2) {
      throw Error("shoal mpi-costs needs at least two ranks: mpirun -np 2 shoal mpi-costs -o FILE");
    }
    if (!args.output.empty()) core::require_new_output(args.output, args.force, "-o");
  });
  if (!ok) return 1;
  const core::MeasuredCosts m = core::measure_comm_costs(world, args.rounds);
  return on_rank_zero(world, [&] {
    const std::time_t now = std::time(nullptr);
    char date[32] = {};
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    const std::string text = fmt::format(
        "# MPI costs measured by `shoal mpi-costs` with {} ranks on {} ({}), medians of {} "
        "rounds.\n"
        "# Format and meaning: docs/scaling.md.\n"
        "[mpi]\n"
        "name = \"{} ranks, measured\"\n"
        "# Half a ping-pong of a 32-byte message between ranks 0 and 1.\n"
        "latency = {}\n"
        "# 1 MiB messages from rank 0 to rank 1, 16 in flight.\n"
        "bandwidth = \"{:.1f}Gbps\"\n"
        "# 32-byte messages streamed from rank 0 to rank 1, 64 in flight: per message.\n"
        "message_overhead = {}\n"
        "\n"
        "# One window's reduction over all ranks (Comm::reduce_window).\n"
        "[[allreduce]]\n"
        "ranks = {}\n"
        "latency = {}\n"
        "\n"
        "# The engine's own work (this machine's CPU), from runs of the engine itself:\n"
        "[engine]\n"
        "# Per window, beyond its reduction and its events.\n"
        "window_overhead = {}\n"
        "# Per event a rank sends to or receives from another, beyond its bytes.\n"
        "remote_event = {}\n",
        m.ranks, date, core::mpi_library_version(), args.rounds, m.ranks, format_seconds(m.latency),
        m.bandwidth * 8 / 1e9, format_seconds(m.message_overhead), m.ranks,
        format_seconds(m.allreduce), format_seconds(m.window_overhead),
        format_seconds(m.remote_event));
    if (args.output.empty()) {
      fmt::print("{}", text);
    } else {
      core::write_file(args.output, "-o", [&](std::ostream& out) { out << text; });
      fmt::print("MPI costs written to {}\n", args.output);
    }
    return 0;
  });
}

}  // namespace

void add_mpi_costs_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<MpiCostsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mpi-costs",
      "Measure this machine's MPI costs for `shoal scale --network FILE` (run under mpirun "
      "with 2 or more ranks)");
  cmd->add_option("-o,--output", args->output,
                  "Write them to FILE (TOML, as configs/scale/); default: standard output")
      ->check(file_name());
  cmd->add_option("--rounds", args->rounds, "Rounds to take the median of")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--force", args->force, "Overwrite an existing file");
  cmd->callback([&action, args] {
    action = [args](const core::Comm& world) { return measure(world, *args); };
  });
}

}  // namespace shoal::cli
