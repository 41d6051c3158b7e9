#include "shoal/work/workload_config.hpp"

#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"
#include "shoal/core/free_heap.hpp"
#include "shoal/work/case_ii_panel.hpp"
#include "shoal/work/chakra_trace.hpp"
#include "shoal/work/job_file.hpp"
#include "shoal/work/training_dag.hpp"
#include "shoal/work/workload_loader.hpp"

namespace shoal::work {

namespace {

/// A Chakra trace named by [workload] file = "DIR/NAME": its options from
/// [workload] (collective, gpus) and [gpu] (the rate of num_ops), each rank
/// file an input of the run (recorded for /meta, found again by rerun).
std::string read_chakra_workload(config::ConfigFile& config, const std::string& prefix, GpuId gpus,
                                 Dag& dag) {
  const std::string where = "config " + config.path() + ": ";
  constexpr std::string_view w = "workload";
  ChakraOptions options;
  try {
    options.collective =
        parse_collective_algorithm(config.string(w, "collective").value_or("ring"));
  } catch (const Error& e) {
    throw Error(where + "workload.collective: " + e.what());
  }
  if (const auto list = config.integers(w, "gpus")) {
    for (const std::int64_t g : *list) {
      if (g < 0 || g >= gpus) {
        throw Error(where + "workload.gpus: GPU " + std::to_string(g) +
                    " is outside the fabric (GPUs 0.." + std::to_string(gpus - 1) + ")");
      }
      options.gpus.push_back(static_cast<GpuId>(g));
    }
  }
  const auto peak = config.number("gpu", "peak_tflops");
  const auto efficiency = config.number("gpu", "efficiency");
  if (efficiency && !peak) throw Error(where + "gpu.efficiency needs gpu.peak_tflops");
  if (peak) {
    const double e = efficiency.value_or(GpuSpec{}.efficiency);
    if (!(*peak > 0) || !(e > 0) || e > 1) {
      throw Error(where + "gpu: peak_tflops must be positive and efficiency in (0, 1]");
    }
    options.flops_per_second = *peak * e * 1e12;
  }
  const auto locate = [&](const std::string& name) { return config.locate(name); };
  std::vector<std::string> paths;
  for (const std::string& name : chakra_rank_names(prefix, locate)) {
    paths.push_back(config.input("workload", name));
  }
  if (options.gpus.empty() && paths.size() > gpus) {
    throw Error("chakra trace " + prefix + ": " + std::to_string(paths.size()) +
                " NPUs on a fabric of " + std::to_string(gpus) +
                " GPUs (place them with [workload] gpus = [...])");
  }
  load_chakra_trace(prefix, paths, options, dag);
  return prefix;
}

}  // namespace

Workload read_workload(config::ConfigFile& config, GpuId gpus, std::uint32_t gpus_per_server,
                       Dag& dag) {
  const std::string prefix = "config " + config.path() + ": ";
  Workload workload;
  constexpr std::string_view w = "workload";
  const auto file = config.string(w, "file");
  const auto generator = config.string(w, "generator");
  const auto job = config.string(w, "job");
  const auto jobs = config.strings(w, "jobs");
  if (file.has_value() + generator.has_value() + job.has_value() + jobs.has_value() != 1) {
    throw Error(prefix +
                "workload: give one of file = \"...\" (a workload file), job = \"...\" "
                "or jobs = [...] (training job files), generator = \"case-ii-panel\"");
  }
  if (job || jobs) {
    const std::vector<std::string> files = jobs ? *jobs : std::vector<std::string>{*job};
    if (files.empty()) throw Error(prefix + "workload.jobs is empty");
    for (std::size_t j = 0; j < files.size(); ++j) {
      const std::string path = config.input("job", files[j]);
      core::require_input_file(path, "job");
      JobSpec spec = read_job_file(path);
      spec.id = static_cast<std::uint32_t>(j);
      if (job) apply_job_overrides(config, "job", spec);  // [job]: this run's changes
      if (!spec.skew.routing_name.empty()) {
        spec.skew.routing_file =
            config.input("routing", spec.skew.routing_name, spec.skew.routing_base);
        core::require_input_file(spec.skew.routing_file, "routing file");
      }
      if (!spec.sequences.file_name.empty()) {
        spec.sequences.file =
            config.input("lengths", spec.sequences.file_name, spec.sequences.file_base);
        core::require_input_file(spec.sequences.file, "sequence lengths file");
      }
      spec.resolve(gpus, gpus_per_server);
      for (const JobSpec& other : workload.jobs) {
        const auto a0 = spec.parallel.first_gpu, a1 = a0 + spec.parallel.gpus;
        const auto b0 = other.parallel.first_gpu, b1 = b0 + other.parallel.gpus;
        if (a0 < b1 && b0 < a1) {
          throw Error(prefix + "workload.jobs: " + spec.file + " and " + other.file +
                      " share GPUs (set parallelism.first_gpu and gpus)");
        }
      }
      add_training_job(spec, dag);
      workload.jobs.push_back(std::move(spec));
    }
    dag.resolve();
    workload.name = files.front();
  } else if (generator) {
    if (*generator != "case-ii-panel") {
      throw Error(prefix + "workload.generator: unknown generator \"" + *generator +
                  "\" (choose case-ii-panel)");
    }
    CaseIiPanel panel;
    panel.ep_bytes = config.bytes(w, "ep_bytes").value_or(panel.ep_bytes);
    panel.pp_bytes = config.bytes(w, "pp_bytes").value_or(panel.pp_bytes);
    panel.dp_bytes = config.bytes(w, "dp_bytes").value_or(panel.dp_bytes);
    panel.compute = config.time(w, "compute").value_or(panel.compute);
    const std::int64_t layer = config.integer(w, "layer").value_or(panel.layer);
    if (layer < 1 || layer > UINT32_MAX) throw Error(prefix + "workload.layer must be at least 1");
    panel.layer = static_cast<std::uint32_t>(layer);
    workload.name = "case-ii-panel";
    try {
      add_case_ii_panel(panel, dag);
    } catch (const Error& e) {
      throw Error(prefix + "workload: " + e.what());
    }
  } else if (config.string(w, "format") == "chakra") {
    workload.name = read_chakra_workload(config, *file, gpus, dag);
  } else {
    workload.name = config.input("workload", *file);
    core::require_input_file(workload.name, "workload");
    const std::string format = config.string(w, "format").value_or("auto");
    try {
      load_workload(workload.name, format, dag);
    } catch (const Error& e) {
      const std::string what = e.what();
      // The readers name the file; a bad format name is the config's mistake.
      if (what.rfind("unknown workload format", 0) == 0)
        throw Error(prefix + "workload.format: " + what);
      throw;
    }
  }
  // What the build freed goes back first: the check's own arrays come on top.
  core::release_free_heap();
  try {
    dag.validate(gpus);
  } catch (const Error& e) {
    throw Error("workload " + workload.name + ": " + e.what());
  }
  dag.drop_foreign_dependencies();
  return workload;
}

}  // namespace shoal::work
