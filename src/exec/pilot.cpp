#include "shoal/exec/pilot.hpp"

#include <algorithm>

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
/// start: 8 bytes a group rather than a flow. No flow's end is needed.
RecorderOptions pilot_recording() {
  RecorderOptions recording = RecorderOptions::coflows_only();
  recording.group_starts = true;
  return recording;
}

/// This rank's groups and tasks, read in place from the pilot's model, into
/// `pilot.load` (not yet summed over ranks).
void add_local_load(const work::Dag& dag, Model& model, Bytes cell_size, PilotLoad& pilot) {
  const std::span<const Time> group_start = model.recorder().group_starts();
  const std::span<const Time> task_start = model.recorder().task_starts();
  const DependencyTracker& groups = model.executor().tracker();
  const std::size_t slices = pilot.load.slices;
  std::vector<std::uint64_t>& load = pilot.load.load;
  auto slice_of = [&](Time t) {
    const auto s =
        static_cast<std::size_t>(static_cast<double>(std::max<Time>(t, 0)) /
                                 static_cast<double>(pilot.span) * static_cast<double>(slices));
    return std::min(s, slices - 1);
  };
  const Bytes cell = std::max<Bytes>(cell_size, 1);
  for (std::uint32_t g = 0; g < groups.group_count(); ++g) {
    const Time start = group_start[g];
    if (start == kTimeInfinity) continue;  // never started (a deadlock the real run reports)
    const std::size_t s = slice_of(start);
    for (const work::FlowId f : groups.group(SenderGroupId{g}).flows) {
      const work::Flow& flow = dag.flow(f);  // sent here, so held
      const std::uint64_t cells =
          std::max<std::uint64_t>(1, static_cast<std::uint64_t>((flow.bytes + cell - 1) / cell));
      load[std::size_t{flow.src} * slices + s] += cells;
      load[std::size_t{flow.dst} * slices + s] += cells;
    }
  }
  const auto& tasks = dag.tasks();
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const Time start = task_start[t];
    if (start != kTimeInfinity) load[std::size_t{tasks[t].gpu} * slices + slice_of(start)] += 1;
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
                     std::uint64_t seed, std::size_t slices) {
  PilotLoad pilot;
  pilot.load.slices = slices;
  {
    // The pilot's model is gone before the loads are summed: the sum's
    // buffers would otherwise come on top of it as it hands over to the run.
    const core::Partition partition = pilot_partition(fabric, comm.size());
    core::EngineOptions engine;
    engine.seed = seed;
    engine.progress = false;
    core::Simulator sim(comm, fabric.layout(), partition, engine);
    Model model(fabric, dag, sim, pilot_network(network), perturbations, {}, pilot_recording());
    model.initialize();
    const core::RunSummary summary = sim.run(model);
    pilot.events = summary.events;
    pilot.windows = summary.windows;
    pilot.loop_seconds = summary.wall_seconds;
    pilot.span = std::max<Time>(summary.simulated_time, 1);
    // Only now: while the pilot runs, its model is all this rank holds.
    pilot.load.load.assign(std::size_t{fabric.gpu_count()} * slices, 0);
    add_local_load(dag, model, network.cell_size, pilot);
  }
  comm.sum_all_in_place(pilot.load.load);
  return pilot;
}

}  // namespace shoal::exec
