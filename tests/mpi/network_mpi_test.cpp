// The packet network at N ranks against its one-rank run, made on each rank
// over MPI_COMM_SELF: every flow's and task's times the same, with credits
// added early (NetworkOptions::early_credits) and without. A credit returning
// to a port on another rank is added as it arrives there, where it could have
// gone early had the port been on the sender's rank (Network::take_arrival),
// so on this case the N-rank run has no more events than the one-rank run
// (elsewhere a few credits can differ either way: docs/proofs.md); without
// that, every credit across the cut was an event.
#include <gtest/gtest.h>

#include <algorithm>

#include <string>

#include "../unit/contending_dag.hpp"
#include "../unit/one_rank_run.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/net/network.hpp"
#include "shoal/sched/policy.hpp"

namespace shoal::net {
namespace {

struct Case {
  std::string strategy;
  std::uint32_t gpus_per_server;
};

test::OneRankRun run(const core::Comm& comm, const Case& c, const topo::Fabric& fabric,
                     const work::Dag& dag, bool early_credits,
                     const exec::RecorderOptions& recording = {}) {
  NetworkOptions options;
  options.early_credits = early_credits;
  options.check = true;  // queues and credits recounted every batch
  sched::PolicyConfig policy;
  sched::parse_policy_name("hermod", policy);
  policy.classes = 2;
  return test::run_on(comm, c.strategy, fabric, dag, options, {},
                      test::priorities_of(dag, fabric, policy), /*check_end_state=*/true,
                      kTimeInfinity, core::EventOrder::kTime, recording);
}

void expect_same_as_serial(const Case& c) {
  const core::Comm world = core::Comm::world();
  const topo::Fabric fabric = test::contending_leaf_spine(c.gpus_per_server);
  const work::Dag dag = test::contending_dag(64, 40'000, 700'001, 3 * kMicrosecond);
  const test::OneRankRun serial = run(core::Comm::self(), c, fabric, dag, true);
  const test::OneRankRun early = run(world, c, fabric, dag, true);
  const test::OneRankRun events_only = run(world, c, fabric, dag, false);
  // As the CLI runs: no per-flow times.
  const test::OneRankRun coflows_only =
      run(world, c, fabric, dag, true, exec::RecorderOptions::coflows_only());
  if (world.size() > 1) {
    EXPECT_GT(early.remote_events, 0) << "no event crossed ranks: the case tests nothing";
  }
  // Credits go early on any partition at least as often as on one rank.
  EXPECT_LE(early.events, serial.events);
  EXPECT_LT(early.events, events_only.events);
  if (world.rank() != 0) return;
  ASSERT_FALSE(serial.results.flow_end.empty());
  for (const test::OneRankRun* other : {&early, &events_only}) {
    EXPECT_EQ(other->results.flow_start, serial.results.flow_start);
    EXPECT_EQ(other->results.flow_end, serial.results.flow_end);
    EXPECT_EQ(other->results.task_start, serial.results.task_start);
    EXPECT_EQ(other->results.task_end, serial.results.task_end);
    EXPECT_EQ(other->results.gpu_comm_wait, serial.results.gpu_comm_wait);
    EXPECT_EQ(other->results.bytes_delivered, serial.results.bytes_delivered);
    EXPECT_EQ(other->results.cell_hops, serial.results.cell_hops);
  }
  for (const test::OneRankRun* other : {&early, &events_only}) {
    EXPECT_EQ(other->results.coflow_start, serial.results.coflow_start);
    EXPECT_EQ(other->results.coflow_end, serial.results.coflow_end);
    EXPECT_EQ(other->results.coflow_flows_ended, serial.results.coflow_flows_ended);
  }
  for (const test::OneRankRun* other : {&early, &events_only, &coflows_only}) {
    EXPECT_TRUE(other->results.coflows == serial.results.coflows) << "coflow summaries differ";
  }
  ASSERT_FALSE(serial.results.coflows.iterations.empty());
  EXPECT_TRUE(coflows_only.results.coflow_start.empty());
  EXPECT_TRUE(coflows_only.results.flow_end.empty());
  // Without every task's times, what the reports need of them.
  EXPECT_TRUE(coflows_only.results.task_end.empty());
  EXPECT_EQ(coflows_only.results.last_task_end,
            *std::max_element(serial.results.task_end.begin(), serial.results.task_end.end()));
  EXPECT_EQ(coflows_only.results.first_unfinished_task, serial.results.first_unfinished_task);
  EXPECT_EQ(coflows_only.results.job_iteration_end, serial.results.job_iteration_end);
}

TEST(NetworkMpi, TopologyPartitionMatchesSerialRun) { expect_same_as_serial({"topology", 1}); }

TEST(NetworkMpi, BlockPartitionOfServersMatchesSerialRun) { expect_same_as_serial({"block", 4}); }

}  // namespace
}  // namespace shoal::net
