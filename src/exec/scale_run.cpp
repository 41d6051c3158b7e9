#include "shoal/exec/scale_run.hpp"

#include <chrono>
#include <memory>

#include "shoal/config/config_file.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/probed_model.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/core/window_probe.hpp"
#include "shoal/exec/model.hpp"
#include "shoal/sched/policy.hpp"

namespace shoal::exec {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The run's simulator and model on this rank alone, as `shoal run` builds them.
struct OneRank {
  OneRank(const RunSetup& setup, const core::Comm& self)
      : partition(
            core::Partition::from_strategy(setup.fabric->layout(), 1, core::Strategy::kBlock)),
        sim(self, setup.fabric->layout(), partition, setup.engine) {}
  void build(const RunSetup& setup) {
    const sched::CoflowPriorities priorities =
        sched::coflow_priorities(setup.dag, *setup.fabric, setup.policies.front());
    net::NetworkOptions options = setup.network;
    options.record = false;
    // Only events are counted.
    model = std::make_unique<Model>(*setup.fabric, setup.dag, sim, options, setup.perturbations,
                                    net::FlowPriorities{priorities.key, priorities.cls},
                                    RecorderOptions::coflows_only());
    model->initialize();
  }
  core::Partition partition;
  core::Simulator sim;
  std::unique_ptr<Model> model;
};

}  // namespace

OneRankRun run_one_rank(const RunSetup& setup) {
  const core::Comm self = core::Comm::self();
  const auto start = Clock::now();
  OneRank one(setup, self);
  one.build(setup);
  OneRankRun run;
  run.build_seconds = seconds_since(start);
  const core::RunSummary summary = one.sim.run(*one.model);
  run.events = summary.events;
  run.loop_seconds = summary.wall_seconds;
  return run;
}

std::vector<core::ScalePrediction> probe_partitions(const RunSetup& setup,
                                                    std::span<const core::Partition> partitions,
                                                    const core::ScaleCosts& costs,
                                                    double loop_seconds) {
  const core::Comm self = core::Comm::self();
  core::WindowProbe probe(setup.fabric->layout(), partitions, &net::Network::crossing_role, costs);
  OneRank one(setup, self);
  one.sim.attach_probe(probe);  // before the first event: the initial ones count too
  one.build(setup);
  core::ProbedModel<Model> probed(*one.model, probe);
  one.sim.run(probed);
  return probe.predictions(loop_seconds);
}

CostFile read_cost_file(const std::string& path) {
  config::ConfigFile file(path);
  const std::string prefix = "config " + file.path() + ": ";
  constexpr std::string_view m = "mpi";
  CostFile result;
  core::MpiCosts& costs = result.mpi;
  auto required_time = [&](std::string_view table, std::string_view key) {
    const std::optional<Time> t = file.time(table, key);
    if (!t) throw Error(prefix + std::string(table) + "." + std::string(key) + " is missing");
    if (*t < 0) throw Error(prefix + std::string(table) + "." + std::string(key) + " is negative");
    return static_cast<double>(*t) * 1e-12;
  };
  costs.name = file.string(m, "name").value_or(file.path());
  costs.latency = required_time(m, "latency");
  costs.message_overhead = required_time(m, "message_overhead");
  const std::optional<BitsPerSecond> rate = file.rate(m, "bandwidth");
  if (!rate) throw Error(prefix + "mpi.bandwidth is missing");
  if (*rate <= 0) throw Error(prefix + "mpi.bandwidth must be positive");
  costs.bandwidth = static_cast<double>(*rate) / 8.0;
  const std::size_t points = file.entries("allreduce");
  if (points == 0) {
    throw Error(prefix + "no [[allreduce]] entries (ranks and latency of a small allreduce)");
  }
  for (std::size_t i = 0; i < points; ++i) {
    const std::string table = "allreduce[" + std::to_string(i) + "]";
    const std::optional<std::int64_t> ranks = file.integer(table, "ranks");
    if (!ranks) throw Error(prefix + table + ".ranks is missing");
    if (*ranks < 2 || *ranks > 1'000'000) {
      throw Error(prefix + table + ".ranks must be 2 to 1000000, not " + std::to_string(*ranks));
    }
    if (!costs.allreduce.empty() && *ranks <= costs.allreduce.back().ranks) {
      throw Error(prefix + table + ".ranks must grow from entry to entry");
    }
    costs.allreduce.push_back({static_cast<int>(*ranks), required_time(table, "latency")});
  }
  if (file.time("engine", "window_overhead") || file.time("engine", "remote_event")) {
    result.engine = core::EngineCosts{required_time("engine", "window_overhead"),
                                      required_time("engine", "remote_event")};
  }
  file.reject_unknown();
  return result;
}

}  // namespace shoal::exec
