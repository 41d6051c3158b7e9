#include "shoal/exec/executor.hpp"

#include <cmath>
#include <string>

#include "shoal/core/error.hpp"

namespace shoal::exec {

using net::EventTag;
using work::GpuId;
using work::TaskId;

namespace {

constexpr std::uint32_t tag(ExecEvent kind) {
  return EventTag::pack(static_cast<std::uint32_t>(kind));
}

}  // namespace

Executor::Executor(const topo::Fabric& fabric, const work::Dag& dag, core::Simulator& sim,
                   std::span<const Straggler> stragglers, Recorder& recorder)
    : fabric_(fabric),
      dag_(dag),
      recorder_(recorder),
      tracker_(dag, [&](GpuId g) { return sim.owns(fabric.gpu_node(g)); }),
      gpus_(fabric.gpu_count()),
      straggle_at_(fabric.gpu_count(), kTimeInfinity),
      straggle_factor_(fabric.gpu_count(), 1.0) {
  for (const Straggler& s : stragglers) {
    straggle_at_[s.gpu] = s.at;
    straggle_factor_[s.gpu] = s.slowdown;
  }
  recorder.count_groups(tracker_.group_count());
}

void Executor::initialize(core::Simulator& sim, net::Network& network) {
  ready_.clear();
  tracker_.initial(ready_);
  initializing_ = true;  // each GPU's start-up sends are numbered as its own
  start_ready(sim, network, false);
  initializing_ = false;
}

void Executor::start_ready(core::Simulator& sim, net::Network& network, bool by_comm) {
  // Taken out first (into buffers that keep their capacity): starting a group
  // never makes more ready, but `ready_` is refilled by the next completion.
  starting_tasks_.assign(ready_.tasks.begin(), ready_.tasks.end());
  starting_groups_.assign(ready_.groups.begin(), ready_.groups.end());
  ready_.clear();
  for (const TaskId t : starting_tasks_) {
    const work::ComputeTask& task = dag_.task(t);
    Gpu& gpu = gpus_[task.gpu];
    if (by_comm && !gpu.computing && gpu.ready.empty()) {
      recorder_.gpu_waited(task.gpu, task.labels.iteration, sim.now() - gpu.idle_since);
    }
    gpu.ready.push(t);
    if (initializing_) sim.act_as(gpu_node(task.gpu));
    start_compute(task.gpu, sim);
  }
  for (const SenderGroupId group : starting_groups_) {
    const SenderGroup& g = tracker_.group(group);
    const Time start = dag_.coflow(g.coflow).earliest_start;
    if (initializing_) sim.act_as(gpu_node(g.gpu));
    if (start > sim.now()) {
      sim.send(gpu_node(g.gpu), start - sim.now(), tag(ExecEvent::kGroupStart), group);
    } else {
      start_group(group, sim, network);
    }
  }
}

void Executor::start_compute(GpuId g, core::Simulator& sim) {
  Gpu& gpu = gpus_[g];
  if (gpu.computing || gpu.ready.empty()) return;
  const TaskId t = gpu.ready.front();
  gpu.ready.pop();
  gpu.computing = true;
  recorder_.task_started(t, sim.now());
  Time duration = dag_.task(t).duration;
  if (sim.now() >= straggle_at_[g]) {
    duration = static_cast<Time>(std::llround(static_cast<double>(duration) * straggle_factor_[g]));
  }
  recorder_.gpu_computes(g, duration);
  sim.send(gpu_node(g), duration, tag(ExecEvent::kComputeDone), t);
}

void Executor::start_group(SenderGroupId group, core::Simulator& sim, net::Network& network) {
  const SenderGroup& g = tracker_.group(group);
  recorder_.group_started(group, sim.now());
  for (const work::FlowId f : g.flows) {
    recorder_.flow_started(f, g.coflow, sim.now());
    network.start_flow(f, g.coflow, sim);
  }
}

void Executor::flow_received(work::FlowId flow, core::Simulator& sim, net::Network& network) {
  const work::CoflowId coflow = dag_.coflow_of(flow);
  recorder_.flow_ended(flow, coflow, sim.now());
  tracker_.flow_done_at(dag_.flow(flow).dst, coflow, ready_);
  start_ready(sim, network, true);
}

void Executor::flow_acknowledged(work::FlowId flow, Time received_at, core::Simulator& sim,
                                 net::Network& network) {
  const work::CoflowId coflow = dag_.coflow_of(flow);
  recorder_.flow_acknowledged(flow, coflow, received_at);
  tracker_.flow_done_at(dag_.flow(flow).src, coflow, ready_);
  start_ready(sim, network, true);
}

void Executor::handle(const core::Event& ev, core::Simulator& sim, net::Network& network) {
  switch (static_cast<ExecEvent>(EventTag::kind_of(ev.tag))) {
    case ExecEvent::kComputeDone: {
      const TaskId task{static_cast<std::uint32_t>(ev.payload)};
      const GpuId g = dag_.task(task).gpu;
      recorder_.task_ended(task, sim.now());
      gpus_[g].computing = false;
      tracker_.task_done(task, ready_);
      start_ready(sim, network, false);
      start_compute(g, sim);
      if (!gpus_[g].computing) gpus_[g].idle_since = sim.now();
      return;
    }
    case ExecEvent::kGroupStart:
      start_group(SenderGroupId{static_cast<std::uint32_t>(ev.payload)}, sim, network);
      return;
  }
  throw Error("internal: unknown event kind " + std::to_string(EventTag::kind_of(ev.tag)));
}

std::uint64_t Executor::estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                       std::uint64_t flows_sent) {
  // A task's place in its GPU's queue, and the flows' in their sender groups.
  // The tracker's sender group (16 bytes) and the coflow's site at its sender
  // and at its receivers (12 each) are shared by the flows a GPU sends in one
  // coflow: a word per flow where each sends a dozen or more (the tracker's
  // share per task is the recorder's).
  return dag.tasks().size() * sizeof(TaskId) + flows_sent * 2 * sizeof(work::FlowId) +
         std::uint64_t{fabric.gpu_count()} * sizeof(Gpu);
}

}  // namespace shoal::exec
