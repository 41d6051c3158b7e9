// `shoal workload check FILE.toml --gpus N`: reads and validates a workload
// DAG without simulating it, and summarises it.
#include <fmt/format.h>

#include <array>
#include <memory>

#include "commands.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/core/error.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/workload_loader.hpp"

namespace shoal::cli {
namespace {

struct WorkloadArgs {
  std::string file;
  std::uint32_t gpus = 0;
  std::string format = "auto";
};

int check_workload(const core::Comm& world, const WorkloadArgs& args) {
  return on_rank_zero(world, [&] {
    work::Dag dag;
    work::load_workload(args.file, args.format, dag);
    const work::GpuId gpus = args.gpus > 0 ? args.gpus : dag.gpus_used();
    try {
      dag.validate(gpus);
    } catch (const Error& e) {
      throw Error("workload " + args.file + ": " + e.what());
    }
    fmt::print("workload {}: valid for {} GPUs\n", args.file, gpus);
    fmt::print("  compute tasks: {}\n", dag.tasks().size());
    fmt::print("  coflows:       {} ({} flows, {})\n", dag.coflows().size(), dag.flows().size(),
               format_bytes_short(dag.total_bytes()));
    constexpr std::array kTypes{work::CoflowType::kEp, work::CoflowType::kPp, work::CoflowType::kDp,
                                work::CoflowType::kTp, work::CoflowType::kOther};
    for (const work::CoflowType type : kTypes) {
      std::size_t count = 0, flows = 0;
      Bytes bytes = 0;
      for (const work::Coflow& c : dag.coflows()) {
        if (c.labels.type != type) continue;
        ++count;
        flows += c.flow_count;
        for (const work::Flow& f : dag.flows_of(c)) bytes += f.bytes;
      }
      if (count == 0) continue;
      fmt::print("    {:<5} {} coflows, {} flows, {}\n", work::coflow_type_name(type), count, flows,
                 format_bytes_short(bytes));
    }
    return 0;
  });
}

}  // namespace

void add_workload_commands(CLI::App& app, Action& action) {
  CLI::App* workload = app.add_subcommand("workload", "Workload DAGs (docs/workloads.md)");
  workload->require_subcommand(1);
  auto args = std::make_shared<WorkloadArgs>();
  CLI::App* check = workload->add_subcommand(
      "check",
      "Read and validate a workload (tasks, coflows and patterns in TOML or JSON, or an htsim "
      "connection matrix) and summarise it");
  check->add_option("file", args->file, "Workload file")->required()->check(CLI::ExistingFile);
  check
      ->add_option("--format", args->format,
                   "toml, htsim (a connection matrix) or auto: .toml files are TOML")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "toml", "htsim"}));
  check->add_option("--gpus", args->gpus,
                    "GPUs of the fabric it is for (default: as many as the workload uses)");
  check->callback([&action, args] {
    action = [args](const core::Comm& world) { return check_workload(world, *args); };
  });
}

}  // namespace shoal::cli
