// `shoal traffic CONFIG` and `shoal dag CONFIG --gpu G -o dag.json`: a training
// run config's traffic and one GPU's DAG, without simulating; `shoal dag CONFIG
// --format chakra -o DIR/NAME`: every GPU's DAG as a Chakra trace.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <span>

#include "commands.hpp"
#include "run_config.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"
#include "shoal/work/chakra_trace.hpp"
#include "shoal/work/training_dag.hpp"

namespace shoal::cli {
namespace {

struct TrainingArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::int64_t gpu = -1;
  std::string output;
  std::string format = "json";
  bool force = false;
};

RunSetup read_training(const TrainingArgs& args) {
  RunSetup setup;
  read_config_guarded(args.config, args.overrides, 1, setup);
  if (setup.jobs.empty()) {
    throw Error("config " + args.config +
                ": the workload has no training job ([workload] job or jobs)");
  }
  return setup;
}

int traffic(const TrainingArgs& args) {
  const RunSetup setup = read_training(args);
  constexpr std::array<work::CoflowType, 6> types = {
      work::CoflowType::kEp, work::CoflowType::kPp, work::CoflowType::kDp,
      work::CoflowType::kTp, work::CoflowType::kCp, work::CoflowType::kOther};
  for (const work::JobSpec& job : setup.jobs) {
    const work::ParallelSpec& p = job.parallel;
    const work::JobTraffic t = work::job_traffic(job, setup.dag, setup.fabric->gpus_per_server());
    fmt::print(
        "job {} ({}): {} GPUs from {}, TP {}{} PP {} EP {} DP {} (expert DP {}), {} micro-batches "
        "of "
        "{} tokens\n",
        job.id, job.model.name, p.gpus, p.first_gpu, p.tp,
        p.cp > 1 ? fmt::format(" CP {}", p.cp) : std::string(), p.pp, p.ep, p.dp,
        p.cp * p.dp / p.ep, p.micro_batches, p.micro_batch_tokens);
    const work::EpDedup dedup = job.ep_comm.dedup;
    if (dedup == work::EpDedup::kPerExpert ||
        (dedup == work::EpDedup::kAuto && job.model.node_limit == 0)) {
      fmt::print(
          "  one EP dispatch (or combine) per GPU, uniform routing: {} B ({} B to each of {} "
          "peers)\n",
          t.ep_dispatch_per_gpu, work::ep_pair_bytes(job), p.ep - 1);
    } else {
      fmt::print(
          "  one EP dispatch per GPU, uniform routing, {}: {} B on average, network and NVLink "
          "forwards (per expert copy: {} B to each of {} peers)\n",
          work::describe_ep_dedup(job), t.ep_dispatch_per_gpu, work::ep_pair_bytes(job), p.ep - 1);
    }
    if (job.ep_comm.dtype_bytes[0] + job.ep_comm.dtype_bytes[1] + job.ep_comm.dtype_bytes[2] +
            job.ep_comm.dtype_bytes[3] >
        0) {
      fmt::print(
          "  EP bytes per token: dispatch {} B, combine {} B; backward: to the experts {} B, "
          "back {} B (FP8 with one fp32 scale per 128 values)\n",
          work::ep_token_bytes(job, work::EpTransfer::kDispatch),
          work::ep_token_bytes(job, work::EpTransfer::kCombine),
          work::ep_token_bytes(job, work::EpTransfer::kBackwardDispatch),
          work::ep_token_bytes(job, work::EpTransfer::kBackwardCombine));
    }
    fmt::print("  one PP send: {} B; TP per layer and pass per GPU: {} B\n", t.pp_per_send,
               t.tp_per_layer_pass);
    if (p.cp > 1) {
      fmt::print(
          "  CP {} (ring attention, {} tokens per CP rank, {}): per GPU per layer {} B forward, "
          "{} B backward\n",
          p.cp, p.micro_batch_tokens / p.cp,
          p.cp_overlap ? "steps overlapping the attention" : "before the attention",
          t.cp_per_layer_pass, 2 * t.cp_per_layer_pass);
    }
    if (p.sp == work::SpMode::kUlysses && p.tp > 1) {
      fmt::print("  Ulysses over TP {}: per GPU per layer and pass {} B of all-to-alls\n", p.tp,
                 t.sp_per_layer_pass);
    }
    fmt::print("  {}\n", work::describe_schedule(job));
    fmt::print(
        "  DP per GPU per iteration: reduce-scatter dense {} B, experts {} B ({} coflows); "
        "all-gather dense {} B, experts {} B\n",
        t.dp_reduce_dense_per_gpu, t.dp_reduce_expert_per_gpu, t.dp_reductions,
        t.dp_gather_dense_per_gpu, t.dp_gather_expert_per_gpu);
    fmt::print("  per GPU per iteration, mean over the job's GPUs:\n");
    fmt::print("  {:<6} {:>16} {:>16} {:>10}\n", "type", "network", "NVLink", "coflows");
    for (const work::CoflowType type : types) {
      const auto i = static_cast<std::size_t>(type);
      if (t.coflows[i] == 0) continue;
      fmt::print("  {:<6} {:>16} {:>16} {:>10}\n", work::coflow_type_name(type),
                 format_bytes_short(t.network[i]), format_bytes_short(t.nvlink[i]), t.coflows[i]);
    }
  }
  return 0;
}

/// The files of a Chakra trace DIR/NAME there now: NAME.K.et for any K, and
/// NAME.comm_groups.json.
std::vector<std::string> chakra_files_present(const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(prefix).parent_path();
  const std::string stem = fs::path(prefix).filename().string() + ".";
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(folder.empty() ? "." : folder, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.rfind(stem, 0) != 0) continue;
    const std::string rest = file.substr(stem.size());
    const bool rank_file =
        rest.size() > 3 && rest.compare(rest.size() - 3, 3, ".et") == 0 &&
        std::all_of(rest.begin(), rest.end() - 3, [](char c) { return c >= '0' && c <= '9'; });
    if (rank_file || rest == "comm_groups.json") found.push_back((folder / file).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

/// Every GPU's part of the config's DAG (any workload) as NAME.i.et; the
/// overwrite rule of -o covers all of a trace's files, and --force removes a
/// bigger trace's rank files beyond this one's, which a reader would take for
/// more NPUs.
int dag_chakra(const TrainingArgs& args) {
  if (args.gpu >= 0) throw Error("--gpu: --format chakra writes every GPU's DAG");
  if (std::filesystem::path(args.output).filename().empty()) {
    throw Error("-o " + args.output + ": a trace needs a NAME after the folder (DIR/NAME)");
  }
  const std::vector<std::string> present = chakra_files_present(args.output);
  if (!present.empty() && !args.force) {
    throw Error("-o " + args.output + ": " + present.front() +
                " exists (a trace DIR/NAME is all of NAME.*.et; --force overwrites them)");
  }
  core::require_new_output(args.output + ".0.et", args.force, "-o");
  RunSetup setup;
  read_config_guarded(args.config, args.overrides, 1, setup);
  const work::GpuId gpus = setup.dag.gpus_used();
  const std::vector<std::string> files = work::chakra_export_files(args.output, gpus);
  for (const std::string& file : files) core::require_new_output(file, args.force, "-o");
  const work::ChakraExport out = work::write_chakra_trace(setup.dag, gpus, args.output);
  for (const std::string& stale : present) {
    if (std::find(files.begin(), files.end(), stale) == files.end()) std::filesystem::remove(stale);
  }
  fmt::print(
      "{} GPUs: {} nodes ({} coflows as all-to-all collectives, {} flows as sends and receives) "
      "written to {}.0.et .. {}.{}.et and {}.comm_groups.json\n",
      gpus, out.nodes, out.collectives, out.messages, args.output, args.output, gpus - 1,
      args.output);
  return 0;
}

int dag(const TrainingArgs& args) {
  if (args.format == "chakra") return dag_chakra(args);
  if (args.gpu < 0) throw Error("--gpu: which GPU's DAG to write (required with --format json)");
  core::require_new_output(args.output, args.force, "-o");
  const RunSetup setup = read_training(args);
  const work::Dag& d = setup.dag;
  if (args.gpu < 0 || args.gpu >= setup.fabric->gpu_count()) {
    throw Error("--gpu " + std::to_string(args.gpu) + " is outside the fabric (GPUs 0.." +
                std::to_string(setup.fabric->gpu_count() - 1) + ")");
  }
  const auto g = static_cast<work::GpuId>(args.gpu);
  // The GPU's tasks and the coflows it has flows in (only its own flows), and
  // the dependencies among them; the rest of the DAG is left out.
  std::set<std::string, std::less<>> kept;
  nlohmann::json out;
  out["task"] = nlohmann::json::array();
  out["coflow"] = nlohmann::json::array();
  for (const work::ComputeTask& t : d.tasks()) {
    if (t.gpu == g) kept.emplace(t.name);
  }
  for (const work::Coflow& c : d.coflows()) {
    for (const work::Flow& f : d.flows_of(c)) {
      if (f.src == g || f.dst == g) {
        kept.emplace(c.name);
        break;
      }
    }
  }
  auto after = [&](std::span<const work::NodeRef> refs) {
    nlohmann::json names = nlohmann::json::array();
    for (const work::NodeRef ref : refs) {
      if (kept.count(d.name(ref)) != 0) names.push_back(std::string(d.name(ref)));
    }
    return names;
  };
  for (const work::ComputeTask& t : d.tasks()) {
    if (t.gpu != g) continue;
    out["task"].push_back({{"name", std::string(t.name)},
                           {"gpu", t.gpu},
                           {"duration", format_time(t.duration)},
                           {"after", after(t.after)}});
  }
  for (const work::Coflow& c : d.coflows()) {
    if (kept.count(c.name) == 0) continue;
    nlohmann::json flows = nlohmann::json::array();
    for (const work::Flow& f : d.flows_of(c)) {
      if (f.src == g || f.dst == g) {
        flows.push_back({{"src", f.src}, {"dst", f.dst}, {"bytes", std::to_string(f.bytes) + "B"}});
      }
    }
    const work::CoflowLabels& l = c.labels;
    out["coflow"].push_back({{"name", std::string(c.name)},
                             {"type", std::string(work::coflow_type_name(l.type))},
                             {"job", l.job},
                             {"iteration", l.iteration},
                             {"micro_batch", l.micro_batch},
                             {"layer", l.layer},
                             {"stage", l.stage},
                             {"after", after(c.after)},
                             {"flows", flows}});
  }
  core::write_file(args.output, "-o", [&](std::ostream& file) { file << out.dump(1) << '\n'; });
  fmt::print("GPU {}: {} tasks, {} coflows written to {}\n", g, out["task"].size(),
             out["coflow"].size(), args.output);
  return 0;
}

}  // namespace

void add_training_commands(CLI::App& app, Action& action) {
  auto args = std::make_shared<TrainingArgs>();
  CLI::App* t = app.add_subcommand(
      "traffic",
      "Print a training config's bytes per GPU per iteration by type (network vs NVLink) and its "
      "coflow counts, without simulating");
  t->add_option("config", args->config, "Run config (TOML) with [workload] job or jobs")
      ->required()
      ->check(CLI::ExistingFile);
  t->add_option("--set", args->overrides, "Override a config value: TABLE.KEY=VALUE (repeatable)");
  t->callback([&action, args] {
    action = [args](const core::Comm& world) {
      return on_rank_zero(world, [&] { return traffic(*args); });
    };
  });
  CLI::App* d = app.add_subcommand(
      "dag",
      "Write one GPU's part of a training config's DAG in the workload format (JSON), or every "
      "GPU's DAG of any run config as a Chakra trace (--format chakra)");
  d->add_option("config", args->config,
                "Run config (TOML): with [workload] job or jobs for JSON, any for chakra")
      ->required()
      ->check(CLI::ExistingFile);
  d->add_option("--gpu", args->gpu, "The GPU (JSON only)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{(1 << 20) - 1}));
  d->add_option(
       "--format", args->format,
       "json (one GPU's DAG) or chakra (NAME.0.et ... one file per GPU, docs/workloads.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"json", "chakra"}));
  d->add_option("-o,--output", args->output, "The JSON file to write, or DIR/NAME for chakra")
      ->required()
      ->check(file_name());
  d->add_flag("--force", args->force, "Overwrite an existing output file");
  d->add_option("--set", args->overrides, "Override a config value: TABLE.KEY=VALUE (repeatable)");
  d->callback([&action, args] {
    action = [args](const core::Comm& world) {
      return on_rank_zero(world, [&] { return dag(*args); });
    };
  });
}

}  // namespace shoal::cli
