// `shoal topo CONFIG.toml [--ranks N] [--strategy S]`: builds the fabric of a
// config and reports it, with the partition and lookahead N ranks would get.
// `shoal partition fabric CONFIG.toml --ranks N [--strategy S] -o FILE` writes
// that partition as a file, to edit and give back as `[run] partition`.
#include <fmt/format.h>

#include <memory>

#include "commands.hpp"
#include "run_config.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/config/config_file.hpp"
#include "shoal/core/files.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::cli {
namespace {

struct TopoArgs {
  std::string config;
  std::vector<std::string> overrides;
  int ranks = 1;
  std::string strategy = "topology";
  std::string output;  // partition fabric: the file to write ("-": standard output)
  bool force = false;  // ... over an existing one
};

// A partition file named on the command line is found from where shoal runs
// (in a config, run.partition is relative to the config file).

constexpr const char* kStrategyHelp =
    "Partition: a strategy (topology: by pod, segment or leaf group, switches above spread; "
    "weighted: those groups placed so that every rank has a like share of the workload's "
    "work at every stage of the run, from a pilot run, for `partition fabric` only; block; "
    "round-robin) or a partition file";

int show_topology(const core::Comm& world, const TopoArgs& args) {
  return on_rank_zero(world, [&] {
    config::ConfigFile config(args.config, args.overrides);
    const topo::Fabric fabric = topo::build_fabric(config);
    const topo::FabricSummary s = topo::summarize(fabric);
    // First, so that a bad partition is an error before any of the report.
    const core::Partition partition =
        fabric_partition(fabric, args.ranks, args.strategy, args.strategy);
    fmt::print("fabric: {} ({})\n", fabric.kind(), fabric.description());
    fmt::print("  GPUs:       {} in {} servers of {}\n", s.gpus, s.servers,
               fabric.gpus_per_server());
    for (const topo::LevelSummary& l : s.levels) {
      fmt::print("  {:<6}      {} switches, {} down / {} up ports", l.name, l.switches,
                 l.down_ports, l.up_ports);
      if (l.oversubscription > 0) fmt::print(", oversubscription {:.3g}:1", l.oversubscription);
      fmt::print("\n");
    }
    fmt::print("  links:     ");
    for (const auto& [tier, count] : s.links_per_tier) fmt::print(" {} {},", count, tier);
    fmt::print(" (duplex)\n");
    fmt::print("  bisection:  {}\n", format_rate(s.bisection));
    fmt::print("  entities:   {} in {} atoms\n", fabric.layout().entity_count(),
               fabric.layout().atom_count());
    const Time lookahead = core::lookahead(fabric.layout(), partition);
    std::size_t cut = 0;
    for (const core::AtomLink& l : fabric.layout().links()) {
      cut += partition.rank_of_atom(l.from) != partition.rank_of_atom(l.to);
    }
    fmt::print("partition: {} over {} ranks\n", partition.description(), args.ranks);
    const auto per_rank = partition.entities_per_rank(fabric.layout());
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
      fmt::print("  rank {}: {} entities\n", r, per_rank[r]);
    }
    fmt::print("  cut links:  {} of {} (directed)\n", cut, fabric.layout().links().size());
    fmt::print("  lookahead:  {}\n", format_time(lookahead));
    return 0;
  });
}

int write_partition(const core::Partition& partition, const topo::Fabric& fabric,
                    const TopoArgs& args) {
  partition.write_file(args.output, fabric.layout());
  if (args.output == "-") return 0;  // the file alone on standard output
  fmt::print("wrote {}: {} over {} ranks, lookahead {}\n", args.output, partition.description(),
             args.ranks, format_time(core::lookahead(fabric.layout(), partition)));
  return 0;
}

int write_fabric_partition(const core::Comm& world, const TopoArgs& args) {
  return on_rank_zero(world, [&] {
    core::require_new_output(args.output, args.force, "-o");
    if (args.strategy == "weighted") {
      // The whole run config: the pilot runs its workload. Any partition file
      // it names is for another purpose and not read.
      std::vector<std::string> overrides = args.overrides;
      overrides.emplace_back("run.partition=\"weighted\"");
      RunSetup setup;
      read_config(args.config, overrides, args.ranks, setup);
      if (!place_weighted(core::Comm::self(), setup, args.ranks)) return 1;
      return write_partition(*setup.partition, *setup.fabric, args);
    }
    config::ConfigFile config(args.config, args.overrides);
    const topo::Fabric fabric = topo::build_fabric(config);
    return write_partition(fabric_partition(fabric, args.ranks, args.strategy, args.strategy),
                           fabric, args);
  });
}

/// The config, --set, --strategy and --ranks options of both commands; returns
/// --ranks (required by one, defaulted in the other).
CLI::Option* add_fabric_options(CLI::App& cmd, TopoArgs& args) {
  cmd.add_option("config", args.config, "Config file (TOML)")->required()->check(CLI::ExistingFile);
  cmd.add_option("--set", args.overrides, "Override a config value: TABLE.KEY=VALUE (repeatable)");
  cmd.add_option("--strategy", args.strategy, kStrategyHelp)->capture_default_str();
  return cmd.add_option("--ranks", args.ranks, "Ranks to partition for")
      ->check(CLI::Range(1, 65535));
}

}  // namespace

void add_partition_fabric_command(CLI::App& partition, Action& action) {
  auto args = std::make_shared<TopoArgs>();
  CLI::App* cmd = partition.add_subcommand(
      "fabric",
      "Write the partition of a config's fabric for --ranks N as a file (servers whole, "
      "each line a range of entities and its rank); give it back as [run] partition = "
      "\"FILE\" (or --set run.partition=FILE)");
  add_fabric_options(*cmd, *args)->required();
  cmd->add_option("-o,--output", args->output, "File to write (- for standard output)")->required();
  cmd->add_flag("--force", args->force, "Overwrite an existing output file");
  cmd->callback([&action, args] {
    action = [args](const core::Comm& world) { return write_fabric_partition(world, *args); };
  });
}

void add_topo_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<TopoArgs>();
  CLI::App* topo = app.add_subcommand(
      "topo",
      "Build the fabric of a config ([topology]) and report it, with the partition and "
      "lookahead for --ranks N");
  add_fabric_options(*topo, *args)->capture_default_str();
  topo->callback([&action, args] {
    action = [args](const core::Comm& world) { return show_topology(world, *args); };
  });
}

}  // namespace shoal::cli
