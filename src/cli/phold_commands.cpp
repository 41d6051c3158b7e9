// `shoal bench phold` and `shoal partition phold`.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "shoal/bench/phold.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/config/config_file.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/simulator.hpp"

namespace shoal::cli {
namespace {

/// Command-line values; defaults come from PholdConfig so they are written once.
struct PholdArgs {
  bench::PholdConfig defaults;
  std::uint32_t entities = defaults.entities;
  std::uint32_t blocks = defaults.blocks;
  std::uint32_t initial_events = defaults.initial_events;
  double remote = defaults.remote;
  std::string lookahead = format_time(defaults.lookahead);
  std::string mean_delay = format_time(defaults.mean_delay);
  std::string end = format_time(defaults.end_time);
  std::uint64_t seed = defaults.seed;
  std::string strategy = "block";
  std::string partition_file;
  double progress_interval = 5.0;
  std::string config_file;
  // partition phold only
  int ranks = 1;
  std::string output;
  bool force = false;
  /// Options by config key, to tell which ones the user gave on the command line.
  std::map<std::string, CLI::Option*, std::less<>> given;

  bool on_command_line(std::string_view key) const {
    const auto it = given.find(key);
    return it != given.end() && it->second->count() > 0;
  }
};

/// Parses a unit option, naming the option in the error.
Time time_option(std::string_view option, const std::string& text) {
  try {
    return parse_time(text);
  } catch (const Error& e) {
    throw Error("option " + std::string(option) + ": " + e.what());
  }
}

/// Defaults, then the config file's [phold] table, then options given on the
/// command line: later ones win. Also settles the partition source.
bench::PholdConfig to_config(PholdArgs& a) {
  bench::PholdConfig c;
  if (!a.config_file.empty()) {
    config::ConfigFile file(a.config_file);
    constexpr std::string_view t = "phold";
    auto narrow = [&](std::string_view key, std::int64_t v) {
      if (v < 0 || v > UINT32_MAX) {
        throw Error("config " + a.config_file + ": phold." + std::string(key) +
                    " must be between 0 and " + std::to_string(UINT32_MAX));
      }
      return static_cast<std::uint32_t>(v);
    };
    if (auto v = file.integer(t, "entities")) c.entities = narrow("entities", *v);
    if (auto v = file.integer(t, "blocks")) c.blocks = narrow("blocks", *v);
    if (auto v = file.integer(t, "init")) c.initial_events = narrow("init", *v);
    if (auto v = file.number(t, "remote")) c.remote = *v;
    if (auto v = file.time(t, "lookahead")) c.lookahead = *v;
    if (auto v = file.time(t, "mean_delay")) c.mean_delay = *v;
    if (auto v = file.time(t, "end")) c.end_time = *v;
    if (auto v = file.integer(t, "seed")) c.seed = static_cast<std::uint64_t>(*v);
    if (auto v = file.string(t, "strategy"); v && !a.on_command_line("strategy")) a.strategy = *v;
    if (auto v = file.string(t, "partition"); v && !a.on_command_line("partition")) {
      // Relative to the config file, like the other files a config names.
      const std::filesystem::path p(*v);
      a.partition_file = p.is_absolute()
                             ? p.string()
                             : (std::filesystem::path(a.config_file).parent_path() / p).string();
    }
    if (auto v = file.number(t, "progress_interval");
        v && !a.on_command_line("progress_interval")) {
      if (*v <= 0) {
        throw Error("config " + a.config_file + ": phold.progress_interval must be positive");
      }
      a.progress_interval = *v;
    }
    file.reject_unknown();
  }
  if (a.on_command_line("entities")) c.entities = a.entities;
  if (a.on_command_line("blocks")) c.blocks = a.blocks;
  if (a.on_command_line("init")) c.initial_events = a.initial_events;
  if (a.on_command_line("remote")) c.remote = a.remote;
  if (a.on_command_line("lookahead")) c.lookahead = time_option("--lookahead", a.lookahead);
  if (a.on_command_line("mean_delay")) c.mean_delay = time_option("--mean-delay", a.mean_delay);
  if (a.on_command_line("end")) c.end_time = time_option("--end", a.end);
  if (a.on_command_line("seed")) c.seed = a.seed;
  bench::validate(c);
  return c;
}

void add_shape_options(CLI::App* cmd, PholdArgs& a) {
  a.given["entities"] =
      cmd->add_option("--entities", a.entities, "Number of entities (logical processes)")
          ->capture_default_str();
  a.given["blocks"] =
      cmd->add_option("--blocks", a.blocks,
                      "Blocks of entities; a block is never split across ranks, so results do "
                      "not depend on the rank count (ranks <= blocks)")
          ->capture_default_str();
}

int bench_phold(const core::Comm& world, PholdArgs& args, const GlobalOptions& global) {
  bench::PholdConfig config;
  std::optional<core::Layout> layout;
  std::optional<core::Partition> partition;
  std::unique_ptr<core::Simulator> sim;
  std::unique_ptr<bench::Phold> model;
  const bool ready = setup_everywhere(world, [&] {
    config = to_config(args);
    layout.emplace(bench::phold_layout(config));
    partition.emplace(args.partition_file.empty()
                          ? core::Partition::from_strategy(*layout, world.size(),
                                                           core::parse_strategy(args.strategy))
                          : core::Partition::from_file(args.partition_file, *layout, world.size()));
    core::EngineOptions options;
    options.seed = config.seed;
    options.end_time = config.end_time;
    options.progress = !global.quiet;
    options.progress_interval_seconds = args.progress_interval;
    sim = std::make_unique<core::Simulator>(world, *layout, *partition, options);
    model = std::make_unique<bench::Phold>(config, *layout);
    model->initialize(*sim);
  });
  if (!ready) return 1;
  return run_or_abort(world, [&] {
    const core::RunSummary s = sim->run(*model);
    const std::uint64_t checksum = model->checksum(world);
    if (world.rank() != 0) return 0;
    fmt::print("PHOLD benchmark\n");
    fmt::print("  entities:        {} in {} blocks, {} initial event(s) each\n", config.entities,
               config.blocks, config.initial_events);
    fmt::print("  remote fraction: {}\n", config.remote);
    fmt::print("  delay:           lookahead {} + Exp(mean {}), end {}, seed {}\n",
               format_time(config.lookahead), format_time(config.mean_delay),
               format_time(config.end_time), config.seed);
    fmt::print("  ranks:           {} (partition: {})\n", s.ranks, s.partition);
    fmt::print("  lookahead:       {}\n", format_time(s.lookahead));
    fmt::print("  simulated time:  {}\n", format_time(s.simulated_time));
    fmt::print("  events:          {}\n", s.events);
    fmt::print("  remote events:   {} ({:.2f}% crossed ranks)\n", s.remote_events,
               s.remote_percent());
    fmt::print("  windows:         {}\n", s.windows);
    fmt::print("  balance:         {:.1f}% (events over ranks x the busiest's, by window)\n",
               100.0 * s.balance);
    fmt::print("  wall time:       {:.3f} s\n", s.wall_seconds);
    fmt::print("  event rate:      {:.3f} M events/s\n", s.events_per_second() / 1e6);
    fmt::print("  sync share:      {:.1f}% mean, {:.1f}% max over ranks\n",
               100.0 * s.sync_share_mean, 100.0 * s.sync_share_max);
    fmt::print("  checksum:        {:#018x}\n", checksum);
    return 0;
  });
}

int partition_phold(const core::Comm& world, const PholdArgs& args) {
  return on_rank_zero(world, [&] {
    core::require_new_output(args.output, args.force, "-o");
    bench::PholdConfig config;
    config.entities = args.entities;
    config.blocks = args.blocks;
    config.remote = 0;
    bench::validate(config);
    const core::Layout layout = bench::phold_layout(config);
    const core::Partition partition =
        core::Partition::from_strategy(layout, args.ranks, core::parse_strategy(args.strategy));
    partition.write_file(args.output, layout);
    return 0;
  });
}

}  // namespace

void add_phold_commands(CLI::App& bench, CLI::App& partition, const GlobalOptions& global,
                        Action& action) {
  auto args = std::make_shared<PholdArgs>();

  CLI::App* run = bench.add_subcommand(
      "phold",
      "PHOLD, the standard PDES benchmark: every event schedules one more at a random "
      "entity after lookahead + Exp(mean delay); a fraction --remote goes to another block. "
      "Run under mpirun for several ranks; the checksum is identical for any rank count.");
  add_shape_options(run, *args);
  auto& given = args->given;
  given["init"] = run->add_option("--init", args->initial_events, "Initial events per entity")
                      ->capture_default_str();
  given["remote"] =
      run->add_option("--remote", args->remote, "Fraction of events sent to another block, 0..1")
          ->capture_default_str();
  given["lookahead"] =
      run->add_option("--lookahead", args->lookahead,
                      "Latency of the links between blocks and minimum event delay (e.g. 1us)")
          ->capture_default_str();
  given["mean_delay"] =
      run->add_option("--mean-delay", args->mean_delay,
                      "Mean of the exponential delay added to the lookahead (0 puts every event "
                      "on a window edge)")
          ->capture_default_str();
  given["end"] = run->add_option("--end", args->end, "Simulated time to stop at (e.g. 200us)")
                     ->capture_default_str();
  given["seed"] =
      run->add_option("--seed", args->seed, "Run seed; every entity's stream derives from it")
          ->capture_default_str();
  given["strategy"] = run->add_option("--strategy", args->strategy,
                                      "Partition strategy: block or round-robin (over blocks)")
                          ->capture_default_str();
  given["partition"] =
      run->add_option("--partition", args->partition_file,
                      "Partition file (from `shoal partition phold`); overrides --strategy");
  given["progress_interval"] =
      run->add_option("--progress-interval", args->progress_interval,
                      "Seconds between progress lines (--quiet turns them off)")
          ->check(positive_seconds())
          ->capture_default_str();
  run->add_option("-c,--config", args->config_file,
                  "TOML file with a [phold] table (keys: entities, blocks, init, remote, "
                  "lookahead, mean_delay, end, seed, strategy, partition, progress_interval); "
                  "options given here override it")
      ->check(CLI::ExistingFile);
  run->callback([&action, &global, args] {
    action = [&global, args](const core::Comm& world) { return bench_phold(world, *args, global); };
  });

  CLI::App* part = partition.add_subcommand(
      "phold", "Write a partition file for a PHOLD model of the given shape");
  auto part_args = std::make_shared<PholdArgs>();  // its own: `given` maps to its own options
  add_shape_options(part, *part_args);
  part->add_option("--ranks", part_args->ranks, "Rank count the partition is for")->required();
  part->add_option("--strategy", part_args->strategy, "block or round-robin")
      ->capture_default_str();
  part->add_option("-o,--output", part_args->output, "File to write (- for standard output)")
      ->required();
  part->add_flag("--force", part_args->force, "Overwrite an existing output file");
  part->callback([&action, part_args] {
    action = [part_args](const core::Comm& world) { return partition_phold(world, *part_args); };
  });
}

}  // namespace shoal::cli
