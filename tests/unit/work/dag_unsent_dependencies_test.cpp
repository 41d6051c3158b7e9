// A fragment frees the dependencies of the coflows its GPUs send nothing in
// (Dag::drop_unsent_coflow_dependencies): a rank that only receives in a
// coflow, or holds none of its flows, never waits on them. The lists it keeps
// are the same nodes in the same order, the tasks' included; a whole DAG
// keeps every list.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_checks.hpp"
#include "shoal/core/error.hpp"
#include "shoal/work/dag.hpp"
#include "work/first_pair_fragment.hpp"

namespace shoal::work {
namespace {

using shoal::test::error_of;
using shoal::test::Has;
using shoal::work::test::owning_first_two;

/// Tasks on GPUs 0 and 2, and three coflows: GPU 0 sends in "sends", only
/// receives in "receives", and has no flow in "elsewhere"; a task of GPU 0
/// waits on its first task and on "sends".
void build(Dag& dag) {
  dag.add_task("t0", 0, 10, {});
  dag.add_task("t2", 2, 10, {});
  const std::vector<Flow> sends{{0, 2, 100}, {2, 1, 100}};
  const std::vector<Flow> receives{{2, 0, 100}};
  const std::vector<Flow> elsewhere{{2, 3, 100}};
  dag.add_coflow("sends", {}, 0, sends, {"t2", "t0"});
  dag.add_coflow("receives", {}, 0, receives, {"t2"});
  dag.add_coflow("elsewhere", {}, 0, elsewhere, {"t2"});
  dag.add_task("t0b", 0, 10, {"sends", "t0"});
  dag.resolve();
  dag.validate(4);
}

TEST(UnsentCoflowDependencies, AFragmentKeepsOnlyThoseOfCoflowsItsGpusSendIn) {
  Dag dag;
  dag.set_fragment(owning_first_two());
  build(dag);
  dag.drop_foreign_dependencies();
  const std::vector<Coflow>& coflows = dag.coflows();
  ASSERT_EQ(coflows.size(), 3u);
  ASSERT_EQ(coflows[1].after.size(), 1u);  // engaged: the list was there before
  ASSERT_EQ(coflows[2].after.size(), 1u);
  dag.drop_unsent_coflow_dependencies();
  const NodeRef t0{NodeRef::Kind::kTask, 0}, t2{NodeRef::Kind::kTask, 1};
  ASSERT_EQ(coflows[0].after.size(), 2u);
  EXPECT_EQ(coflows[0].after[0], t2);
  EXPECT_EQ(coflows[0].after[1], t0);
  EXPECT_TRUE(coflows[1].after.empty());
  EXPECT_TRUE(coflows[2].after.empty());
  // The task's list moved with the kept ones, unchanged.
  const ComputeTask& t0b = dag.task(TaskId{2});
  EXPECT_EQ(t0b.name, "t0b");
  ASSERT_EQ(t0b.after.size(), 2u);
  EXPECT_EQ(t0b.after[0], (NodeRef{NodeRef::Kind::kCoflow, 0}));
  EXPECT_EQ(t0b.after[1], t0);
  // The rule the ranks check together needs every list: asked for after, it is refused.
  EXPECT_TRUE(Has(error_of([&] { (void)dag.sender_dependencies(); }), "internal"));
}

TEST(UnsentCoflowDependencies, AWholeDagKeepsEveryList) {
  Dag dag;
  build(dag);
  dag.drop_unsent_coflow_dependencies();
  EXPECT_EQ(dag.coflows()[0].after.size(), 2u);
  EXPECT_EQ(dag.coflows()[1].after.size(), 1u);
  EXPECT_EQ(dag.coflows()[2].after.size(), 1u);
}

}  // namespace
}  // namespace shoal::work
