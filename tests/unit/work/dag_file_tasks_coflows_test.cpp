// The TOML workload format's [[task]] and [[coflow]] entries: names, durations,
// labels, flows and dependencies, and a file added to a Dag that holds nodes.
#include "shoal/work/dag_file.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dag_file_test_support.hpp"
#include "error_checks.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::work {
namespace {

using namespace dag_file_test;
using shoal::test::error_of;
using shoal::test::Has;

TEST_F(DagFile, Tasks) {
  const Dag dag = load(R"(# three tasks on one GPU
[[task]]
name = "fwd"
gpu = 3
duration = "50us"

[[task]]
name = "bwd"
gpu = 3
duration = "2.5ms"
after = "fwd"

[[task]]
name = "opt"
gpu = 16777215
duration = "0s"
after = ["fwd", "bwd"]
)");
  ASSERT_EQ(dag.tasks().size(), 3u);
  EXPECT_TRUE(dag.coflows().empty());
  const ComputeTask& fwd = dag.tasks()[0];
  EXPECT_EQ(fwd.name, "fwd");
  EXPECT_EQ(fwd.gpu, 3u);
  EXPECT_EQ(fwd.duration, 50'000'000);
  EXPECT_TRUE(fwd.after.empty());
  const ComputeTask& bwd = dag.tasks()[1];
  EXPECT_EQ(bwd.name, "bwd");
  EXPECT_EQ(bwd.duration, 2'500'000'000);
  ASSERT_EQ(bwd.after.size(), 1u);
  EXPECT_EQ(bwd.after[0], (NodeRef{Kind::kTask, 0}));
  const ComputeTask& opt = dag.tasks()[2];
  EXPECT_EQ(opt.gpu, 16777215u);
  EXPECT_EQ(opt.duration, 0);
  ASSERT_EQ(opt.after.size(), 2u);
  EXPECT_EQ(opt.after[0], (NodeRef{Kind::kTask, 0}));
  EXPECT_EQ(opt.after[1], (NodeRef{Kind::kTask, 1}));
}

TEST_F(DagFile, CoflowWithLabelsAndFlows) {
  Dag dag = load(R"([[coflow]]
name = "a2a"
type = "EP"
job = 2
iteration = 3
micro_batch = 4
layer = 5
stage = 6
start = "20us"
after = "fwd"
flows = [
  { src = 0, dst = 1, bytes = "4MiB" },
  { src = 1, dst = 0, bytes = "32MB" },
  { src = 2, dst = 0, bytes = "7B" },
]

[[coflow]]
name = "plain"
after = ["a2a", "fwd"]
flows = [{ src = 0, dst = 2, bytes = "1kB" }]

[[task]]
name = "fwd"
gpu = 0
duration = "1us"
after = []
)");
  ASSERT_EQ(dag.tasks().size(), 1u);
  ASSERT_EQ(dag.coflows().size(), 2u);
  const Coflow& c = dag.coflows()[0];
  EXPECT_EQ(c.name, "a2a");
  EXPECT_EQ(c.labels.type, CoflowType::kEp);
  EXPECT_EQ(c.labels.job, 2u);
  EXPECT_EQ(c.labels.iteration, 3u);
  EXPECT_EQ(c.labels.micro_batch, 4u);
  EXPECT_EQ(c.labels.layer, 5u);
  EXPECT_EQ(c.labels.stage, 6u);
  EXPECT_EQ(c.earliest_start, 20'000'000);
  ASSERT_EQ(c.after.size(), 1u);
  EXPECT_EQ(c.after[0], (NodeRef{Kind::kTask, 0}));
  const auto flows = dag.flows_of(c);
  ASSERT_EQ(flows.size(), 3u);
  EXPECT_EQ(flows[0].src, 0u);
  EXPECT_EQ(flows[0].dst, 1u);
  EXPECT_EQ(flows[0].bytes, 4'194'304);
  EXPECT_EQ(flows[1].src, 1u);
  EXPECT_EQ(flows[1].dst, 0u);
  EXPECT_EQ(flows[1].bytes, 32'000'000);
  EXPECT_EQ(flows[2].src, 2u);
  EXPECT_EQ(flows[2].dst, 0u);
  EXPECT_EQ(flows[2].bytes, 7);

  const Coflow& plain = dag.coflows()[1];
  EXPECT_EQ(plain.labels.type, CoflowType::kOther);
  EXPECT_EQ(plain.labels.job, 0u);
  EXPECT_EQ(plain.labels.iteration, 0u);
  EXPECT_EQ(plain.labels.micro_batch, 0u);
  EXPECT_EQ(plain.labels.layer, 0u);
  EXPECT_EQ(plain.labels.stage, 0u);
  EXPECT_EQ(plain.earliest_start, 0);
  ASSERT_EQ(plain.after.size(), 2u);
  EXPECT_EQ(plain.after[0], (NodeRef{Kind::kCoflow, 0}));
  EXPECT_EQ(plain.after[1], (NodeRef{Kind::kTask, 0}));
  EXPECT_EQ(pairs_of(dag, plain), (std::vector<Pair>{{0, 2}}));
  EXPECT_EQ(dag.flows_of(plain)[0].bytes, 1000);

  EXPECT_TRUE(dag.tasks()[0].after.empty());
  EXPECT_EQ(dag.total_bytes(), 4'194'304 + 32'000'000 + 7 + 1000);
  dag.validate(3);
}

TEST_F(DagFile, TinyExample) {
  // configs/examples/tiny_workload.toml
  Dag dag = load(R"(# A small hand-written workload: two GPUs compute, exchange, compute again.
[[task]]
name = "fwd-0"
gpu = 0
duration = "50us"

[[task]]
name = "fwd-1"
gpu = 1
duration = "60us"

[[coflow]]
name = "a2a"
type = "EP"
layer = 1
after = ["fwd-0", "fwd-1"]
flows = [
  { src = 0, dst = 1, bytes = "4MiB" },
  { src = 1, dst = 0, bytes = "4MiB" },
]

[[task]]
name = "bwd-0"
gpu = 0
duration = "100us"
after = ["a2a"]

[[pattern]]
name = "background"
kind = "all-to-all"
gpus = "0..7"
group_size = 4
groups = "strided"
bytes = "1MB"
type = "DP"
start = "20us"
)");
  EXPECT_EQ(dag.tasks().size(), 3u);
  ASSERT_EQ(dag.coflows().size(), 2u);
  EXPECT_EQ(dag.all_flows().size(), 2u + 24u);
  EXPECT_EQ(dag.gpus_used(), 8u);
  EXPECT_EQ(dag.total_bytes(), 2 * 4'194'304 + 24 * 1'000'000);
  const Coflow& bg = dag.coflows()[1];
  EXPECT_EQ(bg.name, "background");
  EXPECT_EQ(bg.labels.type, CoflowType::kDp);
  EXPECT_EQ(bg.earliest_start, 20'000'000);
  EXPECT_EQ(dag.coflows()[0].labels.layer, 1u);
  ASSERT_EQ(dag.tasks()[2].after.size(), 1u);
  EXPECT_EQ(dag.tasks()[2].after[0], (NodeRef{Kind::kCoflow, 0}));
  dag.validate(8);
  EXPECT_EQ(error_of([&] { dag.validate(7); }),
            "coflow \"background\": flow 1->7: destination GPU 7 is outside the fabric (GPUs "
            "0..6)");
}

TEST_F(DagFile, AddsToADagThatHoldsNodes) {
  Dag dag;
  dag.add_task("pre", 0, 1, {});
  load_dag_file(write(R"([[task]]
name = "post"
gpu = 0
duration = "1ns"
after = "pre"
)"),
                dag);
  ASSERT_EQ(dag.tasks().size(), 2u);
  ASSERT_EQ(dag.tasks()[1].after.size(), 1u);
  EXPECT_EQ(dag.tasks()[1].after[0], (NodeRef{Kind::kTask, 0}));
  dag.validate(1);

  // A name already in the Dag is a duplicate, reported at the entry.
  const std::string error = error_of([&] {
    load_dag_file(write(R"([[task]]
name = "x"
gpu = 0
duration = "1ns"

[[coflow]]
name = "pre"
flows = [{ src = 0, dst = 1, bytes = "1B" }]
)"),
                  dag);
  });
  EXPECT_EQ(named_file(error, path_),
            at(6) +
                "coflow \"pre\": name \"pre\" is used twice (task and coflow names must be "
                "unique)");
}

TEST_F(DagFile, AFileWithNothingToSimulateIsAnError) {
  // An empty file is far more often the wrong file than a study of nothing.
  EXPECT_TRUE(Has(error_of([&] { load("# nothing here\n"); }),
                  "holds no [[task]], [[coflow]] or [[pattern]] entry: nothing to simulate"));
  EXPECT_TRUE(Has(error_of([&] { load("task = []\n"); }), "nothing to simulate"));
}

}  // namespace
}  // namespace shoal::work
