// `shoal workload check FILE.toml --gpus N`: reads and validates a workload
// DAG without simulating it, and summarises it.
#include <fmt/format.h>

#include <array>
#include <memory>

#include "commands.hpp"
#include "shoal/cli/guard.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"
#include "shoal/work/chakra_trace.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/workload_loader.hpp"

namespace shoal::cli {
namespace {

struct WorkloadArgs {
  std::string file;
  std::uint32_t gpus = 0;
  std::string format = "auto";
  std::string collective = "ring";
};

int check_workload(const core::Comm& world, const WorkloadArgs& args) {
  return on_rank_zero(world, [&] {
    work::Dag dag;
    std::string chakra_summary;
    if (args.format == "chakra") {
      work::ChakraOptions options;
      options.collective = work::parse_collective_algorithm(args.collective);
      const auto same = [](const std::string& name) { return name; };
      chakra_summary =
          work::load_chakra_trace(args.file, work::chakra_rank_names(args.file, same), options, dag)
              .line();
    } else {
      core::require_input_file(args.file, "workload");
      work::load_workload(args.file, args.format, dag);
    }
    const work::GpuId gpus = args.gpus > 0 ? args.gpus : dag.gpus_used();
    try {
      dag.validate(gpus);
    } catch (const Error& e) {
      throw Error("workload " + args.file + ": " + e.what());
    }
    fmt::print("workload {}: valid for {} GPUs\n", args.file, gpus);
    if (!chakra_summary.empty()) fmt::print("  {}\n", chakra_summary);
    fmt::print("  compute tasks: {}\n", dag.tasks().size());
    fmt::print("  coflows:       {} ({} flows, {})\n", dag.coflows().size(), dag.all_flows().size(),
               format_bytes_short(dag.total_bytes()));
    constexpr std::array kTypes{work::CoflowType::kEp, work::CoflowType::kPp,
                                work::CoflowType::kDp, work::CoflowType::kTp,
                                work::CoflowType::kCp, work::CoflowType::kOther};
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
      "Read and validate a workload (tasks, coflows and patterns in TOML or JSON, an htsim "
      "connection matrix or a Chakra trace) and summarise it");
  check->add_option("file", args->file, "Workload file (for a Chakra trace: DIR/NAME)")->required();
  check
      ->add_option("--format", args->format,
                   "toml, json, htsim (a connection matrix), chakra (NAME.0.et, NAME.1.et ...) or "
                   "auto: .toml and .json files by their extension")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "toml", "json", "htsim", "chakra"}));
  check
      ->add_option("--collective", args->collective,
                   "A Chakra trace's collectives as ring steps or one direct coflow")
      ->capture_default_str()
      ->check(CLI::IsMember({"ring", "direct"}));
  check->add_option("--gpus", args->gpus,
                    "GPUs of the fabric it is for (default: as many as the workload uses)");
  check->callback([&action, args] {
    action = [args](const core::Comm& world) { return check_workload(world, *args); };
  });
}

}  // namespace shoal::cli
