// `shoal sweep SWEEP.toml --list | --count | --check | --point I | --all`:
// the points of a sweep file, each one `shoal run` of the base config with the
// point's overrides, written to RESULTS/NAME.h5. Finished points are skipped,
// so a resubmitted sweep resumes (docs/sweeps.md, slurm/).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>

#include "commands.hpp"
#include "run_config.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/config/config_file.hpp"
#include "shoal/config/sweep_file.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"
#include "shoal/core/sha256.hpp"
#include "shoal/output/hdf5_status.hpp"
#include "shoal/output/run_record.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::cli {
namespace {

struct SweepArgs {
  std::string file;
  std::string results;
  std::string point;
  bool list = false;
  bool count = false;
  bool check = false;
  bool all = false;
  double progress_interval = 5.0;
};

struct PointInfo {
  config::SweepPoint point;
  std::string file;
  std::uint64_t gpus = 0;
  int ranks = 1;
  std::string config_resolved;  // the point's config as /meta records it
};

PointInfo describe(const config::Sweep& sweep, std::size_t index, const std::string& results) {
  PointInfo info;
  info.point = sweep.point(index);
  info.file = (std::filesystem::path(results) / (info.point.name + ".h5")).string();
  // The fabric alone (cheap) gives the GPU count that sizes the point's ranks.
  config::ConfigFile config(sweep.base, info.point.overrides);
  info.gpus = topo::build_fabric(config).gpu_count();
  info.config_resolved = config.resolved_text();
  if (sweep.ranks) {
    info.ranks = *sweep.ranks;
  } else if (sweep.gpus_per_rank > 0) {
    const auto per = static_cast<std::uint64_t>(sweep.gpus_per_rank);
    info.ranks = static_cast<int>(std::max<std::uint64_t>(1, (info.gpus + per - 1) / per));
  }
  if (sweep.max_ranks > 0) info.ranks = std::min(info.ranks, sweep.max_ranks);
  return info;
}

std::size_t find_point(const config::Sweep& sweep, const std::string& text) {
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  if (digits && text.size() <= 9) return sweep.point(std::stoul(text)).index;
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    if (sweep.point(i).name == text) return i;
  }
  throw Error("sweep " + sweep.path + ": no point named \"" + text + "\" (see --list)");
}

/// Why a completed point's file is not this point's result any more, or ""
/// where it is: the config it was run from (the base with the point's
/// values) or an input file it read (a job file, a routing file) changed since.
std::string stale_reason(const PointInfo& info) {
  output::RunRecord record;
  try {
    record = output::read_run_record(info.file);
  } catch (const Error&) {
    return {};  // a file from before /meta kept its config: nothing to compare
  }
  if (record.config_resolved != info.config_resolved) {
    return "its config differs from the point's (the base config, [set] or an axis changed)";
  }
  for (const config::InputSnapshot& in : record.inputs) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(in.file.path, ec)) continue;  // moved: not ours to judge
    if (core::sha256_file(in.file.path) != in.sha256) {
      return "its " + in.file.role + " " + in.file.path + " has changed since";
    }
  }
  return {};
}

/// The status as rank 0 sees the shared file system, the same on every rank.
output::RunFileStatus shared_status(const core::Comm& world, const std::string& file) {
  std::uint64_t mine = 0;
  if (world.rank() == 0) mine = static_cast<std::uint64_t>(output::run_file_status(file));
  std::uint64_t status = 0;
  world.sum_all(std::span(&mine, 1), std::span(&status, 1));
  return static_cast<output::RunFileStatus>(status);
}

/// Runs one point unless its file is complete or another run holds it;
/// returns the exit code.
int run_point(const core::Comm& world, const config::Sweep& sweep, const PointInfo& info,
              const SweepArgs& args, const GlobalOptions& global) {
  if (shared_status(world, info.file) == output::RunFileStatus::kComplete) {
    // A result of another config is neither skipped as this point's nor
    // overwritten: the user decides what becomes of it.
    const bool current = setup_everywhere(world, [&] {
      if (world.rank() != 0) return;
      if (const std::string why = stale_reason(info); !why.empty()) {
        throw Error("sweep " + sweep.path + ", point " + std::to_string(info.point.index) + " (" +
                    info.point.name + "): " + info.file + " is a completed run, but " + why +
                    "; move the file away to run the point again");
      }
    });
    if (!current) return 1;
    if (world.rank() == 0) {
      fmt::print("point {} ({}): already done, skipped ({})\n", info.point.index, info.point.name,
                 info.file);
    }
    return 0;
  }
  const bool made = setup_everywhere(world, [&] {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(info.file).parent_path(), ec);
    if (ec) throw Error("sweep results folder " + info.file + ": " + ec.message());
  });
  if (!made) return 1;
  // A claim on the point, so that two sweeps started over each other (two
  // submit-sweep calls) run it once: rank 0 holds it for all ranks.
  std::optional<core::FileLock> claim;
  std::uint64_t mine = 0, busy = 0;
  if (!setup_everywhere(world, [&] {
        if (world.rank() == 0) {
          claim = core::FileLock::try_lock(info.file + ".lock");
          mine = claim ? 0 : 1;
        }
      })) {
    return 1;
  }
  world.sum_all(std::span(&mine, 1), std::span(&busy, 1));
  if (busy != 0) {
    if (world.rank() == 0) {
      const std::string who = core::FileLock::holder(info.file + ".lock");
      fmt::print("point {} ({}): already running elsewhere ({}.lock{}), skipped\n",
                 info.point.index, info.point.name, info.file, who.empty() ? "" : ": " + who);
    }
    return 0;
  }
  // Looked at again under the claim: the other run may have finished it.
  const output::RunFileStatus status = shared_status(world, info.file);
  if (status == output::RunFileStatus::kComplete) {
    if (world.rank() == 0) {
      fmt::print("point {} ({}): already done, skipped ({})\n", info.point.index, info.point.name,
                 info.file);
    }
    return 0;
  }
  if (world.rank() == 0) {
    fmt::print(
        "point {} of {} ({}): {} GPUs on {} rank{}{}\n", info.point.index, sweep.size(),
        info.point.name, info.gpus, world.size(), world.size() == 1 ? "" : "s",
        status == output::RunFileStatus::kIncomplete ? "; rerunning an incomplete file" : "");
    std::fflush(stdout);
  }
  RunArgs run;
  run.config = sweep.base;
  run.overrides = info.point.overrides;
  run.output = info.file;
  run.force = status == output::RunFileStatus::kIncomplete;
  run.progress_interval = args.progress_interval;
  run.sweep_point = sweep.path + ":" + info.point.name;
  return run_simulation(world, run, global);
}

/// Reads the whole config (fabric, workload, policy) of the first point and of
/// one point per value of every axis, so a typo fails here, not in a queue.
int check(const core::Comm& world, const config::Sweep& sweep) {
  std::vector<std::size_t> indices{0};
  std::size_t stride = 1;
  for (std::size_t a = sweep.axes.size(); a-- > 0;) {
    for (std::size_t v = 1; v < sweep.axes[a].values.size(); ++v) indices.push_back(v * stride);
    stride *= sweep.axes[a].values.size();
  }
  std::sort(indices.begin(), indices.end());
  for (const std::size_t i : indices) {
    const config::SweepPoint point = sweep.point(i);
    RunSetup setup;
    const bool ok = setup_everywhere(world, [&] {
      try {
        read_config(sweep.base, point.overrides, world.size(), setup);
        require_one_policy(setup, "");  // as running the point does
      } catch (const Error& e) {
        throw Error("sweep " + sweep.path + ", point " + std::to_string(i) + " (" + point.name +
                    "): " + e.what());
      }
    });
    if (!ok) return 1;
    if (world.rank() == 0) {
      fmt::print("point {} ({}): ok, {} GPUs, {} coflows, {} flows\n", i, point.name,
                 setup.fabric->gpu_count(), setup.dag.coflow_count(), setup.dag.flow_count());
    }
  }
  if (world.rank() == 0) {
    fmt::print("checked {} of {} points: every value of every axis reads\n", indices.size(),
               sweep.size());
  }
  return 0;
}

int sweep_main(const core::Comm& world, const SweepArgs& args, const GlobalOptions& global) {
  config::Sweep sweep;
  if (!setup_everywhere(world, [&] { sweep = config::read_sweep_file(args.file); })) return 1;
  const std::string results = args.results.empty() ? sweep.results_folder() : args.results;
  if (args.count) {
    if (world.rank() == 0) fmt::print("{}\n", sweep.size());
    return 0;
  }
  if (args.check) return check(world, sweep);
  if (args.list) {
    std::vector<PointInfo> infos;
    if (!setup_everywhere(world, [&] {
          for (std::size_t i = 0; i < sweep.size(); ++i)
            infos.push_back(describe(sweep, i, results));
        })) {
      return 1;
    }
    if (world.rank() != 0) return 0;
    fmt::print("# sweep {}: {} points of {}; results in {}\n", sweep.path, sweep.size(), sweep.base,
               results);
    fmt::print("# index name gpus ranks status file\n");
    for (const PointInfo& info : infos) {
      const output::RunFileStatus status = output::run_file_status(info.file);
      const bool done = status == output::RunFileStatus::kComplete;
      const bool running = !done && core::FileLock::held(info.file + ".lock");
      const bool stale = done && !stale_reason(info).empty();
      fmt::print("{} {} {} {} {} {}\n", info.point.index, info.point.name, info.gpus, info.ranks,
                 running ? "running"
                 : stale ? "stale"
                         : output::to_string(status),
                 info.file);
    }
    return 0;
  }
  std::vector<std::size_t> todo;
  if (!setup_everywhere(world, [&] {
        if (args.all) {
          for (std::size_t i = 0; i < sweep.size(); ++i) todo.push_back(i);
        } else {
          todo.push_back(find_point(sweep, args.point));
        }
      })) {
    return 1;
  }
  for (const std::size_t i : todo) {
    PointInfo info;
    if (!setup_everywhere(world, [&] { info = describe(sweep, i, results); })) return 1;
    const int status = run_point(world, sweep, info, args, global);
    if (status != 0) return status;
  }
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, const GlobalOptions& global, Action& action) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "List or run the points of a sweep file: a base config plus axes of config values "
      "(docs/sweeps.md); each point writes RESULTS/NAME.h5 and finished points are skipped");
  cmd->add_option("sweep", args->file, "Sweep file (TOML: [sweep] base, [set], [axes])")
      ->required()
      ->check(CLI::ExistingFile);
  auto* list = cmd->add_flag("--list", args->list,
                             "Print the points: index, name, GPUs, suggested ranks, status "
                             "(todo, partial, done) and file");
  auto* count = cmd->add_flag("--count", args->count, "Print the number of points");
  auto* check_flag = cmd->add_flag(
      "--check", args->check,
      "Read the config of one point per axis value (fabric, workload, policy) without simulating");
  auto* point = cmd->add_option("--point", args->point,
                                "Run one point, by index (0-based, as a Slurm array task id) or "
                                "by name; skipped when its file is done");
  auto* all = cmd->add_flag("--all", args->all, "Run every point not yet done, in order");
  list->excludes(count, check_flag, point, all);
  count->excludes(check_flag, point, all);
  check_flag->excludes(point, all);
  point->excludes(all);
  cmd->add_option("--results", args->results,
                  "Folder of the points' HDF5 files (default: [sweep] results, else "
                  "results/<sweep file name>)");
  cmd->add_option("--progress-interval", args->progress_interval,
                  "Seconds between progress lines (--quiet turns them off)")
      ->check(positive_seconds())
      ->capture_default_str();
  cmd->callback([&action, &global, args] {
    if (!args->list && !args->count && !args->check && !args->all && args->point.empty()) {
      throw CLI::ValidationError("sweep", "give one of --list, --count, --check, --point I, --all");
    }
    action = [&global, args](const core::Comm& world) { return sweep_main(world, *args, global); };
  });
}

}  // namespace shoal::cli
