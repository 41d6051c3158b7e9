#include "shoal/exec/pilot.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/simulator.hpp"

namespace shoal::exec {

namespace {

/// The instant network with latency, without the output file's counters.
net::NetworkOptions pilot_network(const net::NetworkOptions& network) {
  net::NetworkOptions instant = network;
  instant.instant = true;
  instant.instant_latency = true;
  instant.record = false;
  instant.link_util_bin = 0;
  return instant;
}

/// The load is placed by each sender group's start, when all its flows
/// start: a start a group rather than a flow. No flow's end is needed.
RecorderOptions pilot_recording() {
  RecorderOptions recording = RecorderOptions::coflows_only();
  recording.group_starts = true;
  return recording;
}

/// When the pilot's sender groups and tasks started, by slice: what the
/// loads need of its model, taken before the model goes so that the loads'
/// table, a row of slices for every GPU of the fabric, never sits on top of it.
struct PilotStarts {
  static constexpr std::uint32_t kNever = UINT32_MAX;  // never started (a deadlock the run reports)
  struct Group {
    work::CoflowId coflow;
    work::GpuId gpu = 0;
    std::uint32_t slice = 0;
  };
  std::vector<Group> groups;         // the groups that started, in the tracker's order
  std::vector<std::uint32_t> tasks;  // by held task: its slice, or kNever
};

PilotStarts take_starts(Model& model, Time span, std::size_t slices) {
  auto slice_of = [&](Time t) {
    const auto s =
        static_cast<std::size_t>(static_cast<double>(std::max<Time>(t, 0)) /
                                 static_cast<double>(span) * static_cast<double>(slices));
    return static_cast<std::uint32_t>(std::min(s, slices - 1));
  };
  PilotStarts starts;
  const std::span<const Time> group_start = model.recorder().group_starts();
  const DependencyTracker& tracker = model.executor().tracker();
  for (std::uint32_t g = 0; g < tracker.group_count(); ++g) {
    if (group_start[g] == kTimeInfinity) continue;
    const SenderGroup group = tracker.group(SenderGroupId{g});
    starts.groups.push_back({group.coflow, group.gpu, slice_of(group_start[g])});
  }
  const std::span<const Time> task_start = model.recorder().task_starts();
  starts.tasks.reserve(task_start.size());
  for (const Time t : task_start) {
    starts.tasks.push_back(t == kTimeInfinity ? PilotStarts::kNever : slice_of(t));
  }
  return starts;
}

/// This rank's groups and tasks into `pilot.load` (not yet summed over
/// ranks). A group's flows are its coflow's held flows from its GPU (those
/// of the rank's senders, exec/dependency_tracker.hpp): each coflow's are
/// read once for all its groups, whose GPUs the tracker lists in order.
void add_local_load(const work::Dag& dag, const PilotStarts& starts, Bytes cell_size,
                    PilotLoad& pilot) {
  const std::size_t slices = pilot.load.slices;
  std::vector<std::uint64_t>& load = pilot.load.load;
  const Bytes cell = std::max<Bytes>(cell_size, 1);
  const std::span<const PilotStarts::Group> groups = starts.groups;
  for (std::size_t first = 0; first < groups.size();) {
    std::size_t end = first + 1;
    while (end < groups.size() && groups[end].coflow == groups[first].coflow) ++end;
    const std::span<const PilotStarts::Group> of_coflow = groups.subspan(first, end - first);
    for (const work::Flow& flow : dag.flows_of(dag.coflow(groups[first].coflow))) {
      const auto at = std::lower_bound(
          of_coflow.begin(), of_coflow.end(), flow.src,
          [](const PilotStarts::Group& g, work::GpuId gpu) { return g.gpu < gpu; });
      if (at == of_coflow.end() || at->gpu != flow.src) continue;
      const std::uint64_t cells =
          std::max<std::uint64_t>(1, static_cast<std::uint64_t>((flow.bytes + cell - 1) / cell));
      load[std::size_t{flow.src} * slices + at->slice] += cells;
      load[std::size_t{flow.dst} * slices + at->slice] += cells;
    }
    first = end;
  }
  const auto& tasks = dag.tasks();
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    if (starts.tasks[t] != PilotStarts::kNever) {
      load[std::size_t{tasks[t].gpu} * slices + starts.tasks[t]] += 1;
    }
  }
}

}  // namespace

std::uint64_t pilot_estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                   const net::NetworkOptions& network,
                                   const net::RankShare& share) {
  return Model::estimate_bytes(fabric, dag, pilot_network(network), pilot_recording(), share)
      .total();
}

core::Partition pilot_partition(const topo::Fabric& fabric, int ranks) {
  return topo::units_in_turn(fabric, ranks);
}

PilotLoad pilot_load(const core::Comm& comm, const topo::Fabric& fabric, const work::Dag& dag,
                     const net::NetworkOptions& network, const Perturbations& perturbations,
                     std::uint64_t seed, std::size_t slices, Time end) {
  PilotLoad pilot;
  pilot.load.slices = slices;
  PilotStarts starts;
  {
    // The pilot's model is gone before the loads are summed: the sum's
    // buffers would otherwise come on top of it as it hands over to the run.
    const core::Partition partition = pilot_partition(fabric, comm.size());
    core::EngineOptions engine;
    engine.seed = seed;
    engine.progress = false;
    engine.end_time = end;
    core::Simulator sim(comm, fabric.layout(), partition, engine);
    Model model(fabric, dag, sim, pilot_network(network), perturbations, {}, pilot_recording());
    model.initialize();
    const core::RunSummary summary = sim.run(model);
    pilot.events = summary.events;
    pilot.windows = summary.windows;
    pilot.loop_seconds = summary.wall_seconds;
    pilot.span = std::max<Time>(summary.simulated_time, 1);
    starts = take_starts(model, pilot.span, slices);
  }
  pilot.load.load.assign(std::size_t{fabric.gpu_count()} * slices, 0);
  add_local_load(dag, starts, network.cell_size, pilot);
  starts = {};
  comm.sum_all_in_place(pilot.load.load);
  return pilot;
}

}  // namespace shoal::exec
