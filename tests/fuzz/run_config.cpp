// shoal::cli::read_config, the whole run config as `shoal run` reads it: the
// fabric, network options, the workload (a file, a generator or training jobs),
// perturbations, policies, milestones, output and run tables, the partition.
// The input is written to configs/examples/ of a scratch tree whose other files
// are links to the repository's example and test configs and to jobs/, so that
// the file names the seeds use ("fat-tree-64-workload.toml",
// "../../jobs/qwen1.5-moe-a2.7b.toml") resolve. "#set" lines: overrides.hpp.
#include <filesystem>

#include "fuzz_common.hpp"
#include "overrides.hpp"
#include "run_config.hpp"
#include "shoal/config/config_file.hpp"

namespace {

std::filesystem::path make_tree() {
  namespace fs = std::filesystem;
  const fs::path source = SHOAL_SOURCE_DIR;
  const fs::path examples = shoal::fuzz::scratch_dir() / "configs" / "examples";
  fs::create_directories(examples);
  std::error_code ignored;
  for (const char* dir : {"configs/examples", "tests/configs"}) {
    for (const auto& entry : fs::directory_iterator(source / dir, ignored)) {
      fs::create_symlink(entry.path(), examples / entry.path().filename(), ignored);
    }
  }
  fs::create_directory_symlink(source / "jobs", shoal::fuzz::scratch_dir() / "jobs", ignored);
  return fs::path("configs") / "examples" / "input.toml";
}

/// Valid configs describe runs of any size up to the readers' bounds (2^20
/// GPUs), and building the fabric and a training job's DAG for a large one takes
/// seconds to minutes under the sanitizers: past the fuzzer's 10 s timeout, and
/// too slow for its 10,000 inputs. Such inputs are skipped: fabrics of 4,097 to
/// 2^20 GPUs (beyond, the reader rejects them at once), and training jobs on more
/// than 32 GPUs or with more than 8 micro-batches or 2 iterations in [job].
bool over_budget(const std::string& path, const std::vector<std::string>& overrides) {
  try {
    shoal::config::ConfigFile config(path, overrides);
    const std::int64_t gpus = config.integer("topology", "gpus").value_or(0);
    if (gpus > 4096 && gpus <= (1 << 20)) return true;
    const bool jobs = config.string("workload", "job") || config.strings("workload", "jobs");
    if (!jobs) return false;
    return gpus > 32 || config.integer("job", "micro_batches").value_or(0) > 8 ||
           config.integer("job", "iterations").value_or(0) > 2 ||
           config.integer("job", "extra_warmup").value_or(0) > 8;
  } catch (const shoal::Error&) {
    return false;  // read_config reports it
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (shoal::fuzz::hits_toml_unicode_bug(shoal::fuzz::text(data, size))) return -1;  // not ours
  static const std::filesystem::path name = make_tree();
  const std::string path = shoal::fuzz::write_input(data, size, name);
  const auto overrides = shoal::fuzz::leading_overrides(shoal::fuzz::text(data, size));
  if (over_budget(path, overrides)) return -1;
  shoal::fuzz::expect_only_errors([&] {
    shoal::cli::RunSetup setup;
    shoal::cli::read_config(path, overrides, /*ranks=*/2, setup);
  });
  return 0;
}
