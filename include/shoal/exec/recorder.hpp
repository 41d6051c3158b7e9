// What a run measures, kept apart from what runs it: every coflow's and
// task's start and end (and, on request, every flow's), each GPU's time
// computing and time idle waiting on a coflow, and, for the output file, the
// rows of flows and compute tasks as they end. At the end it gathers them
// over the ranks onto rank 0 (results()), with the network's byte counts and
// link meters.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/exec/dependency_tracker.hpp"
#include "shoal/exec/records.hpp"
#include "shoal/exec/run_results.hpp"
#include "shoal/net/network.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::exec {

/// What a recorder keeps beyond each coflow's and task's times.
struct RecorderOptions {
  /// Every flow's start and end (RunResults::flow_start, flow_end): 8 bytes
  /// per flow each on every rank, and again on rank 0 for the results. The
  /// CLI's runs, whose outputs need coflows only, keep neither.
  bool flow_starts = true;
  bool flow_ends = true;
  /// Every task's start and end by TaskId (RunResults::task_start,
  /// task_end), 16 bytes per task on every rank and on rank 0; otherwise
  /// only per job and iteration, and for the tasks watched.
  bool task_times = true;
  /// Every coflow's times by CoflowId on rank 0 (RunResults::coflow_start,
  /// coflow_end, coflow_flows_ended), 24 bytes a coflow; the reports take
  /// RunResults::coflows, summed up a block of coflows at a time.
  bool coflow_times = true;
  /// Tasks whose start and end the results carry either way (RunResults::
  /// watched_tasks): those a config's milestones name.
  std::vector<work::TaskId> watched_tasks;
  /// Coflows whose outcome RunResults::coflows carries: those milestones name.
  std::vector<work::CoflowId> watched_coflows;
  /// A row per compute task for the output file.
  bool compute_rows = false;
  /// A row per flow for the output file's flows table.
  bool flow_rows = false;
  /// Each sender group's start (exec/dependency_tracker.hpp), 8 bytes a group
  /// this rank sends: when its flows started, for far fewer bytes than every
  /// flow's start (the weighted partition's pilot).
  bool group_starts = false;

  /// The coflows' summary, and the tasks' times per job and iteration, as
  /// the CLI's runs keep them.
  static RecorderOptions coflows_only() {
    RecorderOptions options;
    options.flow_starts = false;
    options.flow_ends = false;
    options.task_times = false;
    options.coflow_times = false;
    return options;
  }
};

class Recorder {
 public:
  Recorder(const topo::Fabric& fabric, const work::Dag& dag, const core::Simulator& sim,
           const RecorderOptions& options);

  /// A flow of `coflow` starts at its sender.
  void flow_started(work::FlowId flow, work::CoflowId coflow, Time now) {
    if (!flow_start_.empty()) flow_start_[start_slot(flow)] = now;
    Time& start = coflow_start_[dag_.coflow_slot(coflow)];
    start = std::min(start, now);
  }
  /// The flow's last byte reached its receiver.
  void flow_ended(work::FlowId flow, work::CoflowId coflow, Time now) {
    if (!flow_end_.empty()) {
      if (flow_end_[flow] >= 0) [[unlikely]]
        invariant_violated(now, "flow " + std::to_string(flow) + " ended twice");
      flow_end_[flow] = now;
    }
    const std::size_t slot = dag_.coflow_slot(coflow);
    if (++coflow_flows_ended_[slot] > dag_.coflows()[slot].flow_count) [[unlikely]]
      invariant_violated(now,
                         "coflow " + std::to_string(coflow) + " had more flows end than it has");
    coflow_end_[slot] = std::max(coflow_end_[slot], now);
  }
  /// Its sender learned it is done: its row (the receiver's end time, `received_at`).
  void flow_acknowledged(work::FlowId flow, work::CoflowId coflow, Time received_at) {
    if (!options_.flow_rows) return;
    const work::Flow& f = dag_.flow(flow);
    flow_records_.push_back(
        {flow, coflow, f.src, f.dst, f.bytes, flow_start_[start_slot(flow)], received_at});
    flow_recorded_[dag_.held_index(flow)] = 1;
  }
  /// This rank has `count` sender groups (from its executor, before the run).
  void count_groups(std::size_t count) {
    if (options_.group_starts) group_start_.assign(count, kTimeInfinity);
  }
  /// A sender group's flows start (each also through flow_started).
  void group_started(SenderGroupId group, Time now) {
    if (!group_start_.empty()) group_start_[group] = now;
  }
  void task_started(work::TaskId task, Time now) { task_start_[dag_.task_slot(task)] = now; }
  void task_ended(work::TaskId task, Time now);
  /// GPU `gpu` computes for `duration`.
  void gpu_computes(work::GpuId gpu, Time duration) { gpu_busy_[gpu] += duration; }
  /// GPU `gpu` was idle for `waited` until a coflow made a task of `iteration` ready.
  void gpu_waited(work::GpuId gpu, std::uint32_t iteration, Time waited) {
    gpu_comm_wait_[gpu] += waited;
    gpu_iteration_wait_[std::size_t{gpu} * iterations_ + iteration] += waited;
  }

  /// The rows recorded since the last call, for the output file to take.
  std::vector<FlowRecord>& flow_records() { return flow_records_; }
  std::vector<ComputeRecord>& compute_records() { return compute_records_; }
  /// At the end: rows for this rank's flows and tasks that never finished,
  /// about `rows` of each table a call (a coflow's flows are not split), so
  /// that the output file takes them a block at a time. False while some are
  /// left for the next call.
  bool record_unfinished(std::size_t rows);

  /// Collective: every flow's and task's times on rank 0 (empty elsewhere),
  /// with the network's counts. The ranks' /link_util bins are widened to one
  /// width first.
  RunResults results(const core::Comm& comm, net::Network& network) const;

  /// This rank's own records, without gathering them (a one-rank run's are
  /// its results): when each flow (where flow starts are kept, by FlowId)
  /// and each task the DAG holds (by Dag::task_slot) started, kTimeInfinity
  /// where it did not start here.
  std::span<const Time> flow_starts() const { return flow_start_; }
  std::span<const Time> task_starts() const { return task_start_; }
  /// By held coflow (Dag::coflow_slot), over this rank's flows: the first
  /// start, the last end, the flows ended (exec/coflow_rows.hpp merges them).
  std::span<const Time> coflow_starts() const { return coflow_start_; }
  std::span<const Time> coflow_ends() const { return coflow_end_; }
  std::span<const std::uint64_t> coflow_flows_ended() const { return coflow_flows_ended_; }
  /// By sender group, where group starts are kept.
  std::span<const Time> group_starts() const { return group_start_; }

  /// Bytes the recorder takes per flow, per coflow and per task (the rows
  /// waiting for the output file's flush included), on a rank whose GPUs send
  /// `flows_sent` flows.
  static std::uint64_t estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                      const RecorderOptions& options, std::uint64_t flows_sent);

 private:
  const topo::Fabric& fabric_;
  const work::Dag& dag_;
  const core::Simulator& sim_;
  RecorderOptions options_;
  std::uint32_t iterations_ = 1;  // iteration labels of the tasks: 0..iterations_-1
  // By flow, each empty when not kept. Kept only for flow rows, flow_start_
  // holds the flows the DAG holds (a row is written at the flow's sender,
  // which holds it), as does flow_recorded_ always: a rank's share, not the
  // whole DAG's.
  std::vector<Time> flow_start_, flow_end_;
  std::size_t start_slot(work::FlowId flow) const {
    return options_.flow_starts ? std::size_t{flow} : dag_.held_index(flow);
  }
  // By held coflow, over the flows whose sender (start) or receiver (end) is here.
  std::vector<Time> coflow_start_, coflow_end_;
  std::vector<std::uint64_t> coflow_flows_ended_;
  std::vector<Time> task_start_, task_end_;     // by held task (Dag::task_slot)
  std::vector<Time> group_start_;               // by sender group, when kept
  std::vector<Time> gpu_busy_, gpu_comm_wait_;  // by GPU
  std::vector<Time> gpu_iteration_wait_;        // by GPU * iterations_ + iteration
  std::vector<FlowRecord> flow_records_;
  std::vector<ComputeRecord> compute_records_;
  std::vector<std::uint8_t> flow_recorded_, task_recorded_;  // with flow and compute rows
  // Where record_unfinished() goes on: the next coflow slot and task slot.
  std::size_t unfinished_coflow_ = 0, unfinished_task_ = 0;
  /// results()'s share for the tasks: the summaries, and with task_times
  /// every task's times.
  void task_results(const core::Comm& comm, RunResults& r) const;
  /// results()'s share for the coflows: the summary, and with coflow_times
  /// every coflow's times.
  void coflow_results(const core::Comm& comm, RunResults& r) const;
};

}  // namespace shoal::exec
