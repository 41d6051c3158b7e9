// The DAG executor and the recorder on cases whose every time is known in
// closed form: a task waiting for a coflow at its receiver and at its sender
// (the acknowledgement), the exposed communication each GPU records, a
// straggler, and the end-of-run checks of the model.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "contending_dag.hpp"
#include "error_checks.hpp"
#include "one_rank_run.hpp"
#include "shoal/exec/model.hpp"
#include "shoal/exec/outcomes.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::exec {
namespace {

using test::error_of;
using test::Has;

constexpr Time L = kMicrosecond;  // every link's latency (topo::FabricSpec's default)
constexpr Time T = 327'680;       // a 4 KiB cell at 100 Gb/s

/// Two GPUs, one a server, on one switch: GPU -> switch -> GPU is two links.
topo::Fabric two_gpus() {
  topo::FabricSpec spec;
  spec.gpus = 2;
  spec.gpus_per_server = 1;
  return topo::build_single_switch(spec);
}

// A coflow of one flow of 4 cells from GPU 0 to GPU 1 at time 0. Its last
// byte reaches GPU 1 at 2L + 4T (the cells pipeline through the switch); the
// acknowledgement reaches GPU 0 one path (2L) later. GPU 1's task waits for the
// coflow at its receiver, GPU 0's at its sender; both GPUs are idle until then,
// which is what they record as exposed communication, by the iteration label
// of the task that became ready.
TEST(Executor, TasksWaitForACoflowAtItsReceiverAndItsSender) {
  work::Dag dag;
  const std::vector<work::Flow> flow{{0, 1, 4 * 4096}};
  dag.add_coflow("c", {}, 0, flow, {});
  work::TaskLabels second;
  second.iteration = 1;
  dag.add_task("at-receiver", 1, 10 * kMicrosecond, {"c"}, second);
  dag.add_task("at-sender", 0, 5 * kMicrosecond, {"c"});
  dag.resolve();
  const RunResults r = test::run_one_rank(two_gpus(), dag, {}, {}, {}, true).results;
  const Time received = 2 * L + 4 * T;
  ASSERT_EQ(received, 3'310'720);
  EXPECT_EQ(r.flow_end[0], received);
  EXPECT_EQ(r.task_start[0], received);
  EXPECT_EQ(r.task_end[0], received + 10 * kMicrosecond);
  const Time acknowledged = received + 2 * L;
  EXPECT_EQ(r.task_start[1], acknowledged);
  EXPECT_EQ(r.task_end[1], acknowledged + 5 * kMicrosecond);
  EXPECT_EQ(r.gpu_busy, (std::vector<Time>{5 * kMicrosecond, 10 * kMicrosecond}));
  EXPECT_EQ(r.gpu_comm_wait, (std::vector<Time>{acknowledged, received}));
  ASSERT_EQ(r.iterations, 2u);
  EXPECT_EQ(r.gpu_iteration_wait, (std::vector<Time>{acknowledged, 0, 0, received}));
  EXPECT_EQ(r.bytes_delivered, 4 * 4096);
}

// GPU 0 computes a, then b after it, 10 us each. A straggler slows tasks that
// start at or after its time: from 5 us, b (starting at 10 us) takes 2.5 times
// as long; from 0, both do.
TEST(Executor, AStragglerSlowsTheTasksThatStartFromItsTime) {
  work::Dag dag;
  dag.add_task("a", 0, 10 * kMicrosecond, {});
  dag.add_task("b", 0, 10 * kMicrosecond, {"a"});
  dag.resolve();
  for (const Time at : {5 * kMicrosecond, Time{0}}) {
    SCOPED_TRACE(format_time(at));
    Perturbations p;
    p.gpus.push_back({0, at, 2.5});
    const RunResults r = test::run_one_rank(two_gpus(), dag, {}, p).results;
    const Time a = at == 0 ? 25 * kMicrosecond : 10 * kMicrosecond;
    EXPECT_EQ(r.task_end[0], a);
    EXPECT_EQ(r.task_start[1], a);
    EXPECT_EQ(r.task_end[1], a + 25 * kMicrosecond);
    EXPECT_EQ(r.gpu_busy[0], a + 25 * kMicrosecond);
    EXPECT_EQ(r.gpu_comm_wait[0], 0);  // it never waited on a coflow
  }
}

// The CLI's runs keep each coflow's times only. They are those the flows'
// times give (its first flow's start, its last flow's end), also on a run cut
// short, where some coflows have only some of their flows done.
TEST(Recorder, CoflowTimesWithoutFlowTimesAreThoseTheFlowsGive) {
  const topo::Fabric fabric = test::contending_leaf_spine(4);
  const work::Dag dag = test::contending_dag(16, 40'000, 300'001, 3 * kMicrosecond);
  const RecorderOptions by_coflow = RecorderOptions::coflows_only();
  for (const Time end : {kTimeInfinity, 20 * kMicrosecond}) {
    SCOPED_TRACE(format_time(end));
    const RunResults flows =
        test::run_on(core::Comm::self(), "block", fabric, dag, {}, {}, {}, false, end).results;
    const RunResults coflows = test::run_on(core::Comm::self(), "block", fabric, dag, {}, {}, {},
                                            false, end, core::EventOrder::kTime, by_coflow)
                                   .results;
    EXPECT_TRUE(coflows.flow_start.empty());
    EXPECT_TRUE(coflows.flow_end.empty());
    ASSERT_EQ(flows.flow_end.size(), dag.all_flows().size());
    std::uint64_t partly_done = 0, left = 0;
    std::array<std::vector<Time>, work::kCoflowTypes> ccts;
    // The summary's coflow times, without every coflow's (RecorderOptions::coflow_times).
    EXPECT_TRUE(coflows.coflow_start.empty());
    ASSERT_EQ(flows.coflow_start.size(), dag.coflows().size());
    for (std::uint32_t c = 0; c < dag.coflows().size(); ++c) {
      const work::Coflow& coflow = dag.coflows()[c];
      Time start = kTimeInfinity, last = -1;
      std::uint64_t ended = 0;
      for (std::uint32_t f = coflow.first_flow; f < coflow.first_flow + coflow.flow_count; ++f) {
        start = std::min(start, flows.flow_start[f]);
        last = std::max(last, flows.flow_end[f]);
        ended += flows.flow_end[f] >= 0;
      }
      EXPECT_EQ(flows.coflow_start[c], start) << "coflow " << c;
      EXPECT_EQ(flows.coflow_end[c], last) << "coflow " << c;
      EXPECT_EQ(flows.coflow_flows_ended[c], ended) << "coflow " << c;
      partly_done += ended > 0 && ended < coflow.flow_count;
      left += coflow.flow_count - ended;
      if (ended == coflow.flow_count) {
        ccts[static_cast<std::size_t>(coflow.labels.type)].push_back(last - start);
      }
      EXPECT_LE(last, coflows.coflows.last_end);
    }
    EXPECT_EQ(coflows.coflows.ccts, ccts);
    EXPECT_EQ(flows.coflows.ccts, ccts);
    EXPECT_EQ(coflows.coflows.unfinished_flows, left);
    // Without every task's times, only what the reports need of them.
    EXPECT_TRUE(coflows.task_end.empty());
    ASSERT_FALSE(flows.task_end.empty());
    EXPECT_EQ(coflows.last_task_end,
              *std::max_element(flows.task_end.begin(), flows.task_end.end()));
    const auto never = std::find(flows.task_end.begin(), flows.task_end.end(), -1);
    EXPECT_EQ(coflows.first_unfinished_task,
              never == flows.task_end.end() ? -1 : never - flows.task_end.begin());
    const std::uint64_t unfinished = unfinished_flows(coflows);
    if (end == kTimeInfinity) {
      EXPECT_EQ(unfinished, 0u);
    } else {
      EXPECT_GT(partly_done, 0u) << "the cut left no coflow partly done: it tests less";
      EXPECT_GT(unfinished, 0u);
    }
  }
  EXPECT_LT(Recorder::estimate_bytes(fabric, dag, by_coflow, dag.all_flows().size()),
            Recorder::estimate_bytes(fabric, dag, {}, dag.all_flows().size()));
}

// A run cut short leaves rows to write for every flow and task that did not
// finish; the output file takes them a few at a time. Together with the rows
// recorded as things ended, every flow and task has exactly one.
TEST(Recorder, UnfinishedRowsComeInBlocksAndCoverEveryFlowAndTaskOnce) {
  const topo::Fabric fabric = test::contending_leaf_spine(4);
  const work::Dag dag = test::contending_dag(16, 40'000, 300'001, 3 * kMicrosecond);
  const core::Partition partition = topo::partition_fabric(fabric, 1, "block");
  core::EngineOptions engine;
  engine.progress = false;
  engine.end_time = 30 * kMicrosecond;
  const core::Comm comm = core::Comm::self();  // the simulator keeps a reference
  core::Simulator sim(comm, fabric.layout(), partition, engine);
  RecorderOptions recording = RecorderOptions::coflows_only();
  recording.flow_rows = true;
  recording.compute_rows = true;
  const net::NetworkOptions options;
  const Perturbations perturbations;
  Model model(fabric, dag, sim, options, perturbations, {}, recording);
  model.initialize();
  sim.run(model);
  Recorder& recorder = model.recorder();
  std::vector<std::uint32_t> flows, tasks;
  std::size_t unfinished_flows = 0, unfinished_tasks = 0;
  auto take = [&] {
    for (const FlowRecord& row : recorder.flow_records()) {
      flows.push_back(row.id);
      unfinished_flows += row.end_ps < 0;
    }
    for (const ComputeRecord& row : recorder.compute_records()) {
      tasks.push_back(row.task);
      unfinished_tasks += row.end_ps < 0;
    }
    recorder.flow_records().clear();
    recorder.compute_records().clear();
  };
  take();
  constexpr std::size_t kRows = 3;
  int calls = 0;
  for (bool done = false; !done; ++calls) {
    ASSERT_LT(calls, 1000) << "record_unfinished never said it was done";
    done = recorder.record_unfinished(kRows);
    EXPECT_LE(recorder.compute_records().size(), kRows);
    take();
  }
  EXPECT_TRUE(recorder.record_unfinished(kRows));  // nothing is written twice
  EXPECT_TRUE(recorder.compute_records().empty() && recorder.flow_records().empty());
  EXPECT_GT(unfinished_tasks, kRows) << "the cut left too few tasks to need several calls";
  EXPECT_GT(unfinished_flows, 0u);
  EXPECT_GT(calls, 2);
  std::sort(flows.begin(), flows.end());
  std::sort(tasks.begin(), tasks.end());
  std::vector<std::uint32_t> all_flows(dag.all_flows().size()), all_tasks(dag.tasks().size());
  for (std::uint32_t i = 0; i < all_flows.size(); ++i) all_flows[i] = i;
  for (std::uint32_t i = 0; i < all_tasks.size(); ++i) all_tasks[i] = i;
  EXPECT_EQ(flows, all_flows);
  EXPECT_EQ(tasks, all_tasks);
}

TEST(Model, CheckOutcomeNamesADeadlockTimeRunOutATaskThatNeverRanAndLostBytes) {
  work::Dag dag;
  const std::vector<work::Flow> flow{{0, 1, 1000}};
  dag.add_coflow("c", {}, 0, flow, {});
  dag.add_task("t", 1, 1, {"c"});
  dag.resolve();
  RunResults r;
  r.coflows.unfinished_flows = 1;
  r.first_unfinished_task = 0;
  const Time late = kTimeInfinity / 2;  // from here on, times may have saturated
  EXPECT_TRUE(Has(error_of([&] { Model::check_outcome(dag, r, kTimeInfinity, late - 1); }),
                  "flows unfinished and no end time: a deadlock"));
  EXPECT_TRUE(Has(error_of([&] { Model::check_outcome(dag, r, kTimeInfinity, late); }),
                  "times past 2^63 ps (about 106 days) cannot be represented"));
  Model::check_outcome(dag, r, kMillisecond, kMillisecond);  // cut off by an end time: fine
  r.coflows.unfinished_flows = 0;
  r.bytes_delivered = 1000;
  EXPECT_TRUE(Has(error_of([&] { Model::check_outcome(dag, r, kTimeInfinity, kMillisecond); }),
                  "task 0 never ran"));
  r.first_unfinished_task = -1;
  Model::check_outcome(dag, r, kTimeInfinity, kMillisecond);
  r.bytes_delivered = 999;
  EXPECT_TRUE(Has(error_of([&] { Model::check_outcome(dag, r, kMillisecond, kMillisecond); }),
                  "conservation: delivered 999 bytes of 1000"));
}

}  // namespace
}  // namespace shoal::exec
