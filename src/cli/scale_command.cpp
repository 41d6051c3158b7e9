// `shoal scale CONFIG --ranks 2,4,8 --network shm`: predicts how a config
// runs on N ranks from runs on one (docs/scaling.md): one timed run prices an
// event; one probed run per lookahead counts, window by window, what each of
// N parts would handle and exchange; the cost model (core/scaling_model.hpp)
// with the network's MPI costs turns the counts into time.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "memory_guard.hpp"
#include "run_config.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"
#include "shoal/core/free_heap.hpp"
#include "shoal/exec/scale_run.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/fabric_config.hpp"
#include "shoal/topo/load_partition.hpp"

namespace shoal::cli {
namespace {

struct ScaleArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string ranks = "2,4,8,16,32,64,128,256";
  std::string network = "shm";
  std::string output;  // CSV: one row per rank count
  std::string parts;   // CSV: one row per rank count and part
  bool force = false;
  bool progress = true;
};

/// The built-in parameter sets, in configs/scale/ of the source tree the
/// executable was built in (build*/shoal: one folder up).
constexpr std::string_view kBuiltinNetworks[] = {"shm", "infiniband-hdr", "infiniband-ndr"};

std::string network_file(const std::string& name) {
  const bool builtin = std::find(std::begin(kBuiltinNetworks), std::end(kBuiltinNetworks), name) !=
                       std::end(kBuiltinNetworks);
  if (!builtin) {
    if (!std::filesystem::is_regular_file(name)) {
      throw Error("--network " + name +
                  ": neither a file nor a built-in set (shm, infiniband-hdr, infiniband-ndr)");
    }
    return name;
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path file =
      exe.parent_path().parent_path() / "configs" / "scale" / (name + ".toml");
  if (ec || !std::filesystem::is_regular_file(file)) {
    throw Error("--network " + name + ": the built-in set " + file.string() +
                " is missing (it ships in configs/scale/ of the source tree); give a file");
  }
  return file.string();
}

std::vector<int> parse_ranks(const std::string& text) {
  std::vector<int> ranks;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    long value = 0;
    try {
      value = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || value < 1 || value > 65535) {
      throw Error("--ranks \"" + text + "\": \"" + item +
                  "\" is not a rank count from 1 to 65535 (give a list such as 2,4,8)");
    }
    if (std::find(ranks.begin(), ranks.end(), value) != ranks.end()) {
      throw Error("--ranks \"" + text + "\": " + item + " is given twice");
    }
    ranks.push_back(static_cast<int>(value));
  }
  if (ranks.empty() || text.back() == ',') {
    throw Error("--ranks \"" + text + "\": give a list of rank counts such as 2,4,8");
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

struct Row {
  core::ScalePrediction p;
  double speedup = 1;
  double efficiency = 1;
};

void write_csv(const std::string& path, const std::vector<Row>& rows, int recommended,
               const std::string& partition) {
  core::write_file(path, "output", [&](std::ostream& out) {
    out << "ranks,partition,lookahead_ps,windows,events,remote_events,batches,balance,work_s,"
           "reduce_s,exchange_s,loop_s,speedup,efficiency,sync_share,fewest_windows,"
           "fewest_work_s,causal_work_s,critical_path_s,recommended\n";
    for (const Row& r : rows) {
      const core::ScalePrediction& p = r.p;
      out << fmt::format(
          "{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.4f},{:.4f},{:.4f},{},"
          "{:.6f},{:.6f},{:.6f},{}\n",
          p.parts, partition, p.lookahead == kTimeInfinity ? -1 : p.lookahead, p.windows, p.events,
          p.remote_events, p.batches, p.balance(), p.work_seconds, p.reduce_seconds,
          p.exchange_seconds, p.loop_seconds(), r.speedup, r.efficiency, p.sync_share(),
          p.fewest_windows, p.fewest_work_seconds, p.causal_work_seconds, p.critical_path_seconds,
          p.parts == recommended ? 1 : 0);
    }
  });
}

void write_parts(const std::string& path, const std::vector<Row>& rows) {
  core::write_file(path, "parts", [&](std::ostream& out) {
    out << "ranks,part,events,remote_sent,remote_received\n";
    for (const Row& r : rows) {
      for (std::size_t part = 0; part < r.p.part_events.size(); ++part) {
        out << r.p.parts << ',' << part << ',' << r.p.part_events[part] << ','
            << r.p.part_sent[part] << ',' << r.p.part_received[part] << '\n';
      }
    }
  });
}

/// What every rank reads before the timing: the costs and the config; rank 0
/// also makes each rank count's partition.
struct Prepared {
  std::vector<int> counts;
  core::ScaleCosts costs;
  RunSetup setup;
  double read_seconds = 0;
  bool pilot = false;  // the weighted partition's pilot ran
  std::vector<core::Partition> partitions;
};

void prepare(const core::Comm& world, const ScaleArgs& args, Prepared& prep) {
  prep.counts = parse_ranks(args.ranks);
  // Both are CSV, which a name like x.h5 would hide from shoal-report and rerun.
  for (const auto& [path, flag] : {std::pair{args.output, "-o"}, {args.parts, "--parts"}}) {
    if (!path.empty() && core::lower_extension(path) != ".csv") {
      throw Error(std::string(flag) + " " + path + ": the table is CSV; name a .csv file");
    }
  }
  if (world.rank() == 0 && !args.output.empty()) {
    core::require_new_output(args.output, args.force, "-o");
  }
  if (world.rank() == 0 && !args.parts.empty()) {
    core::require_new_output(args.parts, args.force, "--parts");
  }
  exec::CostFile file = exec::read_cost_file(network_file(args.network));
  prep.costs.mpi = std::move(file.mpi);
  // The engine's own costs are this machine's; a file of MPI figures alone
  // (published ones) takes them from the set measured here.
  if (!file.engine) {
    try {
      file.engine = exec::read_cost_file(network_file("shm")).engine;
    } catch (const Error&) {
    }
    if (!file.engine) {
      throw Error("--network " + args.network +
                  ": no [engine] table, and no built-in shm set to take it from; add one "
                  "(shoal mpi-costs measures it)");
    }
  }
  prep.costs.engine = *file.engine;

  const auto start = std::chrono::steady_clock::now();
  RunSetup& setup = prep.setup;
  const int ranks_on_node = world.ranks_on_node();
  read_config_guarded(args.config, args.overrides, ranks_on_node, setup);
  setup.dag.drop_names();  // as `shoal run` does: the run looks no name up
  core::release_free_heap();
  setup.engine.progress = args.progress && world.rank() == 0;
  prep.read_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (setup.network.instant) {
    throw Error("config " + setup.config_path +
                ": network.model = \"instant\" runs on one rank; there is nothing to scale");
  }
  // Every rank times a model of its own at once: one model per rank, as a run.
  check_memory(world.rank(), ranks_on_node, setup, false, setup.memory_limit);
  if (world.rank() != 0) return;
  // Each rank count's partition, as `shoal run` on that many ranks would make it.
  const topo::Fabric& fabric = *setup.fabric;
  std::optional<exec::PilotLoad> pilot;
  for (const int n : prep.counts) {
    if (n == 1) continue;
    try {
      if (setup.partition_spec == "weighted") {
        if (!pilot) {
          check_pilot_memory(0, 1, setup);
          pilot = weighted_pilot(core::Comm::self(), setup);
        }
        prep.partitions.push_back(topo::partition_by_load(fabric, n, pilot->load));
      } else {
        prep.partitions.push_back(
            topo::fabric_partition(fabric, n, setup.partition_spec, setup.partition_spec));
      }
    } catch (const Error& e) {
      throw Error("config " + setup.config_path + ": run.partition for " + std::to_string(n) +
                  " ranks: " + e.what());
    }
  }
  prep.pilot = pilot.has_value();
}

/// On rank 0, after the timing: the probed runs, the table and the files.
int predict(const ScaleArgs& args, Prepared& prep, const exec::OneRankRun& one, int timed_on) {
  const std::vector<int>& counts = prep.counts;
  const core::ScaleCosts& costs = prep.costs;
  const RunSetup& setup = prep.setup;
  const std::vector<core::Partition>& partitions = prep.partitions;
  const topo::Fabric& fabric = *setup.fabric;
  if (one.events == 0) throw Error("config " + setup.config_path + ": the run has no events");
  fmt::print(
      "  one rank{}: {} events in {:.3f} s ({:.1f} ns per event); set-up on every rank: read "
      "{:.2f} s, build {:.2f} s\n",
      timed_on > 1 ? fmt::format(" (the mean of {} timed at once)", timed_on) : std::string(),
      one.events, one.loop_seconds, one.loop_seconds / static_cast<double>(one.events) * 1e9,
      prep.read_seconds, one.build_seconds);

  // One probed run per lookahead: the windows are the same for every cut that shares it.
  std::map<Time, std::vector<std::size_t>> by_lookahead;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    by_lookahead[core::lookahead(fabric.layout(), partitions[i])].push_back(i);
  }
  std::vector<Row> rows;
  core::ScalePrediction single;
  single.events = one.events;
  single.work_seconds = single.mean_work_seconds = one.loop_seconds;
  single.fewest_work_seconds = single.causal_work_seconds = single.critical_path_seconds =
      one.loop_seconds;
  single.busiest_sum = one.events;
  single.part_events = {one.events};
  single.part_sent = single.part_received = {0};
  if (counts.front() == 1) rows.push_back({single});
  for (const auto& [lookahead, members] : by_lookahead) {
    std::vector<core::Partition> group;
    for (const std::size_t i : members) group.push_back(partitions[i]);
    fmt::print("  counting windows of {} for {} rank count{} ...\n", format_time(lookahead),
               members.size(), members.size() == 1 ? "" : "s");
    std::fflush(stdout);
    for (core::ScalePrediction& p : exec::probe_partitions(setup, group, costs, one.loop_seconds)) {
      rows.push_back({std::move(p)});
    }
  }
  std::sort(rows.begin(), rows.end(),
            [](const Row& a, const Row& b) { return a.p.parts < b.p.parts; });
  for (Row& r : rows) {
    r.speedup = one.loop_seconds / r.p.loop_seconds();
    r.efficiency = r.speedup / r.p.parts;
  }
  // The fastest count that keeps at least half of each rank's time for events.
  int recommended = 1;
  double best = one.loop_seconds;
  for (const Row& r : rows) {
    if (r.efficiency >= 0.5 && r.p.loop_seconds() < best) {
      best = r.p.loop_seconds();
      recommended = r.p.parts;
    }
  }

  fmt::print("\n{:>6} {:>10} {:>11} {:>8} {:>8} {:>8} {:>10} {:>9} {:>10} {:>6}\n", "ranks",
             "lookahead", "windows", "balance", "remote", "sync", "loop", "speedup", "efficiency",
             "");
  for (const Row& r : rows) {
    const core::ScalePrediction& p = r.p;
    const double remote =
        p.events > 0 ? 100.0 * static_cast<double>(p.remote_events) / static_cast<double>(p.events)
                     : 0.0;
    fmt::print(
        "{:>6} {:>10} {:>11} {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>8.3f} s {:>8.2f}x {:>9.1f}% "
        "{:>6}\n",
        p.parts, p.lookahead == kTimeInfinity ? "-" : format_time(p.lookahead), p.windows,
        100.0 * p.balance(), remote, 100.0 * p.sync_share(), p.loop_seconds(), r.speedup,
        100.0 * r.efficiency, p.parts == recommended ? "<-" : "");
  }
  fmt::print(
      "\n  loop: the simulation loop's predicted wall (the `wall` of shoal run's report); every "
      "rank also reads the config and builds the model first ({:.2f} s here{})\n",
      prep.read_seconds + one.build_seconds,
      prep.pilot ? ", plus the weighted partition's pilot" : "");
  for (const Row& r : rows) {
    if (r.p.parts != counts.back() || r.p.parts == 1) continue;
    const double terms[] = {r.p.work_seconds, r.p.reduce_seconds, r.p.exchange_seconds};
    const char* names[] = {"the busiest rank's events", "the reductions", "the exchanges"};
    const auto most = static_cast<std::size_t>(
        std::max_element(std::begin(terms), std::end(terms)) - std::begin(terms));
    fmt::print(
        "  at {} ranks: events {:.3f} s (busiest rank; {:.3f} s if balanced), reductions {:.3f} "
        "s, exchanges {:.3f} s; the largest term is {}\n",
        r.p.parts, r.p.work_seconds, r.p.mean_work_seconds, r.p.reduce_seconds,
        r.p.exchange_seconds, names[most]);
    if (r.p.fewest_windows > 0) {
      // A bound for any wider-window scheme (WindowProbe): not a prediction.
      fmt::print(
          "  wider windows: even a lookahead that knew when each event across ranks arrives "
          "would need {} windows at {} ranks, {:.2f}x fewer than the {} of {}; in them the "
          "busiest rank's events would take {:.3f} s\n",
          r.p.fewest_windows, r.p.parts,
          static_cast<double>(r.p.windows) / static_cast<double>(r.p.fewest_windows), r.p.windows,
          format_time(r.p.lookahead), r.p.fewest_work_seconds);
    }
    if (r.p.causal_work_seconds > 0) {
      // Bounds for engines without windows (CausalBound, CriticalPath): not predictions.
      fmt::print(
          "  without windows: the busiest rank's events and waiting would take {:.3f} s if each "
          "rank waited only for what could reach it (any conservative engine with this lookahead), "
          "{:.3f} s "
          "if only for what does (any engine at all), against {:.3f} s window by window\n",
          r.p.causal_work_seconds, r.p.critical_path_seconds, r.p.work_seconds);
    }
  }
  fmt::print("  recommended: {} rank{} (the fastest with at least 50% parallel efficiency)\n",
             recommended, recommended == 1 ? "" : "s");
  if (!args.output.empty()) {
    write_csv(args.output, rows, recommended, setup.partition_spec);
    fmt::print("  table written to {}\n", args.output);
  }
  if (!args.parts.empty()) {
    write_parts(args.parts, rows);
    fmt::print("  per-part counts written to {}\n", args.parts);
  }
  return 0;
}

int scale(const core::Comm& world, const ScaleArgs& args) {
  Prepared prep;
  if (!setup_everywhere(world, [&] { prepare(world, args, prep); })) return 1;
  if (world.rank() == 0) {
    // A comparison of policies is timed by its first: one run at a time, as `shoal run` does.
    const RunSetup& setup = prep.setup;
    fmt::print("scale: {} ({} GPUs), policy {}{}, partition {}, MPI costs {}\n", setup.config_path,
               setup.fabric->gpu_count(), sched::policy_name(setup.policies.front()),
               setup.policies.size() > 1 ? " (the first compared)" : "", setup.partition_spec,
               prep.costs.mpi.name);
    fmt::print("  timing one rank{} ...\n",
               world.size() > 1 ? fmt::format(" on each of {} ranks at once", world.size())
                                : std::string());
    std::fflush(stdout);
  }
  // Under mpirun -np K every rank times the run at once: events are priced
  // as on a machine with K busy cores, as a run on K of them would be.
  exec::OneRankRun one;
  const int status = run_or_abort(world, [&] {
    one = exec::run_one_rank(prep.setup);
    return 0;
  });
  if (status != 0) return status;
  one.loop_seconds = world.sum(one.loop_seconds) / world.size();
  return on_rank_zero(world, [&] { return predict(args, prep, one, world.size()); });
}

}  // namespace

void add_scale_command(CLI::App& app, const GlobalOptions& global, Action& action) {
  auto args = std::make_shared<ScaleArgs>();
  CLI::App* cmd = app.add_subcommand(
      "scale",
      "Predict a config's wall time, speedup and efficiency on N ranks from runs on one "
      "(docs/scaling.md)");
  cmd->add_option("config", args->config, "Config file (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--ranks", args->ranks, "Rank counts to predict, comma-separated")
      ->capture_default_str();
  cmd->add_option("--network", args->network,
                  "MPI costs: shm (one node, measured with `shoal mpi-costs`), infiniband-hdr, "
                  "infiniband-ndr (published OSU figures), or a file in their format "
                  "(configs/scale/)")
      ->capture_default_str();
  cmd->add_option("--set", args->overrides,
                  "Override a config value: TABLE.KEY=VALUE (repeatable)");
  cmd->add_option("-o,--output", args->output,
                  "Write the table as CSV (tools/shoal-report plots it); an existing file needs "
                  "--force")
      ->check(file_name());
  cmd->add_option("--parts", args->parts,
                  "Write each rank count's per-part events and crossing events as CSV")
      ->check(file_name());
  cmd->add_flag("--force", args->force, "Overwrite existing output files");
  cmd->callback([&action, &global, args] {
    action = [&global, args](const core::Comm& world) {
      args->progress = !global.quiet;
      return scale(world, *args);
    };
  });
}

}  // namespace shoal::cli
