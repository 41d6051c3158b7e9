// The DAG executor: runs a workload's compute tasks on the GPUs one rank owns
// and starts its coflows' flows on the network as their dependencies are met.
// A GPU computes one task at a time, in the order its tasks became ready; a
// straggler computes slower from a time on. It is told of each flow's end at
// its receiver and at its sender (net::FlowEvents, through exec::Model) and
// of its own events (ExecEvent).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shoal/core/simulator.hpp"
#include "shoal/exec/dependency_tracker.hpp"
#include "shoal/exec/recorder.hpp"
#include "shoal/net/event_codec.hpp"
#include "shoal/net/network.hpp"
#include "shoal/net/ring.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::exec {

/// The executor's events, each at a GPU (tags above the network's, net::kFirstModelEvent).
enum class ExecEvent : std::uint32_t {
  kComputeDone = net::kFirstModelEvent,     // payload: the task
  kGroupStart = net::kFirstModelEvent + 1,  // a sender group's start time; payload: the group
};

/// A straggler: compute tasks that start on the GPU at or after `at` take
/// `slowdown` times as long.
struct Straggler {
  work::GpuId gpu = 0;
  Time at = 0;
  double slowdown = 1.0;
};

class Executor {
 public:
  Executor(const topo::Fabric& fabric, const work::Dag& dag, core::Simulator& sim,
           std::span<const Straggler> stragglers, Recorder& recorder);

  /// Starts what is ready at time 0 on this rank's GPUs, each as its GPU.
  void initialize(core::Simulator& sim, net::Network& network);
  /// Its own events (ExecEvent).
  void handle(const core::Event& ev, core::Simulator& sim, net::Network& network);
  /// A flow's last byte reached its receiver, one of this rank's GPUs.
  void flow_received(work::FlowId flow, core::Simulator& sim, net::Network& network);
  /// A flow's sender, one of this rank's GPUs, learned it is done.
  void flow_acknowledged(work::FlowId flow, Time received_at, core::Simulator& sim,
                         net::Network& network);

  /// Bytes the executor takes per task, per GPU and per flow this rank's GPUs
  /// send (`flows_sent`).
  static std::uint64_t estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                      std::uint64_t flows_sent);
  /// Which flows start together, from which GPU (Recorder::group_starts says when).
  const DependencyTracker& tracker() const { return tracker_; }

 private:
  struct Gpu {
    bool computing = false;
    net::Ring<work::TaskId> ready;  // tasks ready to compute, in the order they became ready
    Time idle_since = 0;
  };

  /// Starts what became ready; `by_comm` when a coflow completion made it so.
  void start_ready(core::Simulator& sim, net::Network& network, bool by_comm);
  void start_group(SenderGroupId group, core::Simulator& sim, net::Network& network);
  void start_compute(work::GpuId gpu, core::Simulator& sim);
  topo::NodeId gpu_node(work::GpuId g) const { return fabric_.gpu_node(g); }

  const topo::Fabric& fabric_;
  const work::Dag& dag_;
  Recorder& recorder_;
  DependencyTracker tracker_;
  DependencyTracker::Ready ready_;  // reused: no allocation per event
  std::vector<work::TaskId> starting_tasks_;
  std::vector<SenderGroupId> starting_groups_;
  std::vector<Gpu> gpus_;                // by GPU
  std::vector<Time> straggle_at_;        // by GPU
  std::vector<double> straggle_factor_;  // by GPU
  bool initializing_ = false;            // initialize(): sends come from each GPU
};

}  // namespace shoal::exec
