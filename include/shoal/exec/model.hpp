// The engine model of a run: the packet network (net::Network) executing a
// workload DAG (Executor), with what the run measures (Recorder). The engine
// calls handle() for every event; the network's events go to the network,
// the executor's to the executor, and the network tells the executor of each
// finished flow.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/exec/executor.hpp"
#include "shoal/exec/recorder.hpp"
#include "shoal/exec/run_results.hpp"
#include "shoal/net/network.hpp"
#include "shoal/net/network_options.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::exec {

/// What a run perturbs: links (slower, longer or failed) and GPUs (stragglers).
struct Perturbations {
  std::vector<net::LinkPerturbation> links;
  std::vector<Straggler> gpus;
};

class Model final : public net::FlowEvents {
 public:
  /// `priorities`: by flow, the key its NIC orders it by and its switch class
  /// (empty: every flow key 0, class 0: fair sharing). With options.record,
  /// the link meters of the output file are kept; `recording` says what else.
  Model(const topo::Fabric& fabric, const work::Dag& dag, core::Simulator& sim,
        const net::NetworkOptions& options, const Perturbations& perturbations = {},
        net::FlowPriorities priorities = {}, const RecorderOptions& recording = {});

  /// Bytes one rank's model and engine will allocate, by part.
  struct EstimatedBytes {
    std::uint64_t network = 0;  // with the engine's share per node
    std::uint64_t executor = 0;
    std::uint64_t recorder = 0;  // with the output rows it holds
    std::uint64_t total() const { return network + executor + recorder; }
  };
  /// Bytes one rank's model (network, executor, recorder) and engine will
  /// allocate for this fabric and DAG, where the rank holds `share` (its GPUs,
  /// the flows they send, the links it sends on): the resource guard's
  /// estimate, made before building.
  static EstimatedBytes estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                       const net::NetworkOptions& options,
                                       const RecorderOptions& recording,
                                       const net::RankShare& share);

  /// Schedules what happens at time 0 on this rank: link failures, and the
  /// tasks and flows ready at once.
  void initialize();

  void handle(const core::Event& ev, core::Simulator& sim) {
    if (net::EventTag::is_network(ev.tag)) [[likely]] {
      network_.handle(ev, sim);
    } else {
      executor_.handle(ev, sim, network_);
    }
  }
  bool take_arrival(const core::Event& ev, core::Simulator& sim) {
    return network_.take_arrival(ev, sim);
  }
  void prefetch(const core::Event& ev) const { network_.prefetch(ev); }
  void prefetch_stage(const core::Event& ev, int stage) const {
    network_.prefetch_stage(ev, stage);
  }

  /// Called by the engine after every window synchronization, on every rank in
  /// step: the full checks, then the hook (the output file's periodic
  /// collective flush).
  void after_sync(core::Simulator& sim) {
    if (check_) network_.check_ports();
    network_.settle_meters(sim.rank_floor());
    if (sync_hook_) sync_hook_(sim);
  }
  /// Called by the engine every 65,536 events on this rank (one rank has a
  /// single unbounded window, so after_sync alone would check too rarely).
  void every_batch(core::Simulator& sim) {
    if (check_) network_.check_ports();
    network_.settle_meters(sim.rank_floor());
    if (batch_hook_) batch_hook_();
  }
  void set_sync_hook(std::function<void(const core::Simulator&)> hook) {
    sync_hook_ = std::move(hook);
  }
  /// Runs `hook` every 65,536 events on this rank; it must not be collective
  /// unless the run has one rank.
  void set_batch_hook(std::function<void()> hook) { batch_hook_ = std::move(hook); }

  Recorder& recorder() { return recorder_; }
  const Executor& executor() const { return executor_; }
  /// Collective: the run's results on rank 0 (Recorder::results).
  RunResults results(const core::Comm& comm) { return recorder_.results(comm, network_); }
  /// After a run in which every flow finished: this rank's ports are empty
  /// with all their credit back and every flow it received has its bytes.
  void check_end_state() const { network_.check_end_state(); }
  /// On rank 0, after a run that was not stopped: every flow and task ended
  /// exactly once and every byte arrived, unless the run had an end time.
  /// Throws an Error naming the first problem (a deadlock, simulated time run
  /// out, a task that never ran, bytes lost). `simulated`: where the run ended.
  static void check_outcome(const work::Dag& dag, const RunResults& results, Time end_time,
                            Time simulated);

  void on_flow_received(work::FlowId flow, core::Simulator& sim) override {
    executor_.flow_received(flow, sim, network_);
  }
  void on_flow_acknowledged(work::FlowId flow, Time received_at, core::Simulator& sim) override {
    executor_.flow_acknowledged(flow, received_at, sim, network_);
  }

 private:
  core::Simulator& sim_;
  bool check_;
  Recorder recorder_;
  Executor executor_;
  net::Network network_;
  std::function<void(const core::Simulator&)> sync_hook_;
  std::function<void()> batch_hook_;
};

}  // namespace shoal::exec
