// `shoal rerun FILE.h5 -o NEW.h5`: the run again, from what FILE.h5's /meta
// keeps (the resolved config and the input files), so a result can be
// reproduced without the folder it was made in.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "commands.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/config/config_file.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/sha256.hpp"
#include "shoal/output/run_record.hpp"

namespace shoal::cli {
namespace {

namespace fs = std::filesystem;

struct RerunArgs {
  std::string file;
  std::string output;
  bool force = false;
  double progress_interval = 5.0;
};

/// A folder of this rank's copies of the config and inputs, removed with it.
class ScratchFolder {
 public:
  explicit ScratchFolder(int rank)
      : path_(fs::temp_directory_path() /
              fmt::format("shoal-rerun-{}-{}", static_cast<long>(::getpid()), rank)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  std::string write(const std::string& name, const std::string& contents) const {
    const std::string path = (path_ / name).string();
    std::ofstream out(path, std::ios::binary);
    out << contents;
    out.close();
    if (!out) throw Error("rerun: cannot write " + path);
    return path;
  }

 private:
  fs::path path_;
};

/// Where each input is read from now: the embedded copy, or the recorded path
/// where the file was too large to embed and is unchanged.
std::map<std::string, std::string> place_inputs(const output::RunRecord& record,
                                                const ScratchFolder& scratch) {
  std::map<std::string, std::string> where;
  for (std::size_t i = 0; i < record.inputs.size(); ++i) {
    const config::InputSnapshot& in = record.inputs[i];
    const std::string what = fmt::format("rerun {}: {} {} (/meta/inputs/{})", record.file,
                                         in.file.role, in.file.name, i);
    if (in.embedded) {
      if (core::sha256_hex(in.contents) != in.sha256) {
        throw Error(what + ": the embedded copy does not match its SHA-256");
      }
      where[in.file.name] = scratch.write(
          fmt::format("{}-{}", i, fs::path(in.file.name).filename().string()), in.contents);
      continue;
    }
    std::error_code ec;
    if (!fs::is_regular_file(in.file.path, ec)) {
      throw Error(what + fmt::format(": not embedded ({} bytes, over embed_limit), and {} is "
                                     "missing; put the file there again",
                                     in.bytes, in.file.path));
    }
    if (core::sha256_file(in.file.path) != in.sha256) {
      throw Error(what + fmt::format(": not embedded ({} bytes, over embed_limit), and {} has "
                                     "changed since the run (its SHA-256 differs)",
                                     in.bytes, in.file.path));
    }
    where[in.file.name] = in.file.path;
  }
  return where;
}

int rerun(const core::Comm& world, const RerunArgs& args, const GlobalOptions& global) {
  output::RunRecord record;
  std::unique_ptr<ScratchFolder> scratch;
  RunArgs run;
  const bool ready = setup_everywhere(world, [&] {
    record = output::read_run_record(args.file);
    scratch = std::make_unique<ScratchFolder>(world.rank());
    run.input_map = place_inputs(record, *scratch);
    run.config = scratch->write("config.toml", record.config_resolved);
    // The file holds one policy of the config's policy.compare, if it had one.
    config::ConfigFile config(run.config);
    const bool compared = config.strings("policy", "compare").has_value();
    run.overrides = {compared ? fmt::format("policy.compare=[\"{}\"]", record.policy)
                              : fmt::format("policy.name=\"{}\"", record.policy)};
  });
  if (!ready) return 1;
  if (world.rank() == 0 && !global.quiet) {
    fmt::print("rerun of {} ({}{}), policy {}, with {} input file(s)\n", record.file,
               record.completed ? "completed" : "stopped before the end; rerun to the end",
               record.sweep_point.empty() ? "" : ", sweep point " + record.sweep_point,
               record.policy, record.inputs.size());
  }
  run.output = args.output;
  run.force = args.force;
  run.progress_interval = args.progress_interval;
  run.sweep_point = record.sweep_point;
  run.rerun_of = args.file;
  run.config_label = record.file + ":/meta/config_resolved";
  return run_simulation(world, run, global);
}

}  // namespace

void add_rerun_command(CLI::App& app, const GlobalOptions& global, Action& action) {
  auto args = std::make_shared<RerunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "rerun",
      "Run again what an HDF5 result file holds, from its /meta alone: the resolved config "
      "(--set overrides included) and the job and workload files it embedded (docs/output.md)");
  cmd->add_option("file", args->file, "A result file written by shoal run or sweep (FILE.h5)")
      ->required();
  cmd->add_option("-o,--output", args->output,
                  "Where to write the new results (FILE.h5 or FILE.csv); an existing file "
                  "needs --force")
      ->required()
      ->check(file_name());
  cmd->add_flag("--force", args->force, "Overwrite an existing output file");
  cmd->add_option("--progress-interval", args->progress_interval,
                  "Seconds between progress lines (--quiet turns them off)")
      ->check(positive_seconds())
      ->capture_default_str();
  cmd->callback([&action, &global, args] {
    action = [&global, args](const core::Comm& world) { return rerun(world, *args, global); };
  });
}

}  // namespace shoal::cli
