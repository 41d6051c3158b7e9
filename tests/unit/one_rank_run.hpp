// The packet network run on one rank, as the unit tests drive it (and on
// every rank of a communicator, as the MPI tests do).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "shoal/core/comm.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/exec/model.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::test {

/// What a policy enforces for each coflow of `dag` (sched::coflow_priorities).
inline net::FlowPriorities priorities_of(const work::Dag& dag, const topo::Fabric& fabric,
                                         const sched::PolicyConfig& config) {
  const sched::CoflowPriorities p = sched::coflow_priorities(dag, fabric, config);
  return net::FlowPriorities{p.key, p.cls};
}

struct OneRankRun {
  exec::RunResults results;  // times on rank 0 only (exec::Model::results)
  std::int64_t events = 0;   // on all ranks
  std::int64_t remote_events = 0;
  Time sub_window = 0;  // atom order's sub-windows (RunSummary); 0: by time
};

/// Runs `dag` on `fabric` on the ranks of `comm`, partitioned by `strategy`
/// (topo::partition_fabric), to `end_time` (none: to the end); with
/// `check_end_state`, the ports must then be empty with all their credit back
/// (exec::Model::check_end_state). `recording`: what the recorder keeps.
inline OneRankRun run_on(const core::Comm& comm, std::string_view strategy,
                         const topo::Fabric& fabric, const work::Dag& dag,
                         const net::NetworkOptions& options,
                         const exec::Perturbations& perturbations = {},
                         net::FlowPriorities priorities = {}, bool check_end_state = false,
                         Time end_time = kTimeInfinity,
                         core::EventOrder order = core::EventOrder::kTime,
                         const exec::RecorderOptions& recording = {}) {
  const core::Partition partition = topo::partition_fabric(fabric, comm.size(), strategy);
  core::EngineOptions engine;
  engine.progress = false;
  engine.end_time = end_time;
  engine.order = order;
  core::Simulator sim(comm, fabric.layout(), partition, engine);
  exec::Model model(fabric, dag, sim, options, perturbations, std::move(priorities), recording);
  model.initialize();
  const core::RunSummary summary = sim.run(model);
  if (check_end_state) model.check_end_state();
  return {model.results(comm), summary.events, summary.remote_events, summary.sub_window};
}

/// run_on() on one rank.
inline OneRankRun run_one_rank(const topo::Fabric& fabric, const work::Dag& dag,
                               const net::NetworkOptions& options,
                               const exec::Perturbations& perturbations = {},
                               net::FlowPriorities priorities = {}, bool check_end_state = false,
                               Time end_time = kTimeInfinity,
                               core::EventOrder order = core::EventOrder::kTime) {
  return run_on(core::Comm::self(), "block", fabric, dag, options, perturbations,
                std::move(priorities), check_end_state, end_time, order);
}

/// Runs `dag` to `end_time` under `policy` (two switch classes), every port's
/// queues and credits recounted every batch, and, run to the end, the ports
/// empty with all their credit back: what the equivalence tests run both ways.
inline OneRankRun run_policy(const topo::Fabric& fabric, const work::Dag& dag,
                             net::NetworkOptions options, const exec::Perturbations& perturbations,
                             const std::string& policy, Time end_time = kTimeInfinity,
                             core::EventOrder order = core::EventOrder::kTime) {
  sched::PolicyConfig config;
  sched::parse_policy_name(policy, config);
  config.classes = 2;
  options.check = true;
  return run_one_rank(fabric, dag, options, perturbations, priorities_of(dag, fabric, config),
                      end_time == kTimeInfinity, end_time, order);
}

/// The same results: every flow's, coflow's and task's times (and the
/// tasks' summaries), the GPUs' waits, the bytes and cell-hops.
inline void expect_same_results(const OneRankRun& a, const OneRankRun& b) {
  EXPECT_EQ(b.results.flow_start, a.results.flow_start);
  EXPECT_EQ(b.results.flow_end, a.results.flow_end);
  EXPECT_EQ(b.results.coflow_start, a.results.coflow_start);
  EXPECT_EQ(b.results.coflow_end, a.results.coflow_end);
  EXPECT_EQ(b.results.coflow_flows_ended, a.results.coflow_flows_ended);
  EXPECT_TRUE(b.results.coflows == a.results.coflows) << "the coflows' summaries differ";
  EXPECT_EQ(b.results.task_start, a.results.task_start);
  EXPECT_EQ(b.results.task_end, a.results.task_end);
  EXPECT_EQ(b.results.job_iteration_start, a.results.job_iteration_start);
  EXPECT_EQ(b.results.job_iteration_end, a.results.job_iteration_end);
  EXPECT_EQ(b.results.job_iteration_unfinished, a.results.job_iteration_unfinished);
  EXPECT_EQ(b.results.last_task_end, a.results.last_task_end);
  EXPECT_EQ(b.results.first_unfinished_task, a.results.first_unfinished_task);
  EXPECT_EQ(b.results.watched_start, a.results.watched_start);
  EXPECT_EQ(b.results.watched_end, a.results.watched_end);
  EXPECT_EQ(b.results.gpu_comm_wait, a.results.gpu_comm_wait);
  EXPECT_EQ(b.results.bytes_delivered, a.results.bytes_delivered);
  EXPECT_EQ(b.results.cell_hops, a.results.cell_hops);
  EXPECT_EQ(b.results.gpu_busy, a.results.gpu_busy);
}

/// The same run, `b` with no more events than `a`.
inline void expect_same_run(const OneRankRun& a, const OneRankRun& b) {
  expect_same_results(a, b);
  EXPECT_LE(b.events, a.events);
}

/// Runs with `option` (an equivalence switch of NetworkOptions) off, then on:
/// the same run, with no more events. Returns the events saved.
inline std::int64_t events_saved_by(bool net::NetworkOptions::*option, const topo::Fabric& fabric,
                                    const work::Dag& dag, net::NetworkOptions options,
                                    const exec::Perturbations& perturbations,
                                    const std::string& policy, Time end_time = kTimeInfinity) {
  options.*option = false;
  const OneRankRun off = run_policy(fabric, dag, options, perturbations, policy, end_time);
  options.*option = true;
  const OneRankRun on = run_policy(fabric, dag, options, perturbations, policy, end_time);
  expect_same_run(off, on);
  return off.events - on.events;
}

}  // namespace shoal::test
