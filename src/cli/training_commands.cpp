// `shoal traffic CONFIG` and `shoal dag CONFIG --gpu G -o dag.json`: a training
// run config's traffic and one GPU's DAG, without simulating.
#include <fmt/format.h>

#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "commands.hpp"
#include "run_config.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"
#include "shoal/work/training_dag.hpp"

namespace shoal::cli {
namespace {

struct TrainingArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::int64_t gpu = -1;
  std::string output;
  bool force = false;
};

RunSetup read_training(const TrainingArgs& args) {
  RunSetup setup;
  read_config(args.config, args.overrides, 1, setup);
  if (setup.jobs.empty()) {
    throw Error("config " + args.config +
                ": the workload has no training job ([workload] job or jobs)");
  }
  return setup;
}

int traffic(const TrainingArgs& args) {
  const RunSetup setup = read_training(args);
  constexpr std::array<work::CoflowType, 5> types = {work::CoflowType::kEp, work::CoflowType::kPp,
                                                     work::CoflowType::kDp, work::CoflowType::kTp,
                                                     work::CoflowType::kOther};
  for (const work::JobSpec& job : setup.jobs) {
    const work::ParallelSpec& p = job.parallel;
    const work::JobTraffic t = work::job_traffic(job, setup.dag, setup.fabric->gpus_per_server());
    fmt::print(
        "job {} ({}): {} GPUs from {}, TP {} PP {} EP {} DP {} (expert DP {}), {} micro-batches of "
        "{} tokens\n",
        job.id, job.model.name, p.gpus, p.first_gpu, p.tp, p.pp, p.ep, p.dp, p.dp / p.ep,
        p.micro_batches, p.micro_batch_tokens);
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

int dag(const TrainingArgs& args) {
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
  std::set<std::string> kept;
  nlohmann::json out;
  out["task"] = nlohmann::json::array();
  out["coflow"] = nlohmann::json::array();
  for (const work::ComputeTask& t : d.tasks()) {
    if (t.gpu == g) kept.insert(t.name);
  }
  for (const work::Coflow& c : d.coflows()) {
    for (const work::Flow& f : d.flows_of(c)) {
      if (f.src == g || f.dst == g) {
        kept.insert(c.name);
        break;
      }
    }
  }
  auto after = [&](const std::vector<work::NodeRef>& refs) {
    nlohmann::json names = nlohmann::json::array();
    for (const work::NodeRef ref : refs) {
      if (kept.count(d.name(ref)) != 0) names.push_back(d.name(ref));
    }
    return names;
  };
  for (const work::ComputeTask& t : d.tasks()) {
    if (t.gpu != g) continue;
    out["task"].push_back({{"name", t.name},
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
    out["coflow"].push_back({{"name", c.name},
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
      "dag", "Write one GPU's part of a training config's DAG in the workload format (JSON)");
  d->add_option("config", args->config, "Run config (TOML) with [workload] job or jobs")
      ->required()
      ->check(CLI::ExistingFile);
  d->add_option("--gpu", args->gpu, "The GPU")->required();
  d->add_option("-o,--output", args->output, "The JSON file to write")->required();
  d->add_flag("--force", args->force, "Overwrite an existing output file");
  d->add_option("--set", args->overrides, "Override a config value: TABLE.KEY=VALUE (repeatable)");
  d->callback([&action, args] {
    action = [args](const core::Comm& world) {
      return on_rank_zero(world, [&] { return dag(*args); });
    };
  });
}

}  // namespace shoal::cli
