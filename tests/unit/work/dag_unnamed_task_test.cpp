// A fragment's tasks of other ranks' GPUs added unnamed (Dag::add_unnamed_task,
// as the training generator adds them): they keep their ids, GPUs and labels,
// later lists name them by reference, and the rule the ranks check together
// holds whatever order each rank's lists are in.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "error_checks.hpp"
#include "shoal/core/error.hpp"
#include "shoal/work/dag.hpp"
#include "work/sender_bits.hpp"

namespace shoal::work {
namespace {

using shoal::test::error_of;
using shoal::test::Has;
using shoal::work::test::either;

/// A fragment of 4 GPUs owning `first` and `first` + 1, keeping their flows.
DagFragment owning(GpuId first) {
  DagFragment f;
  f.owns.assign(4, false);
  f.owns[first] = f.owns[first + 1] = true;
  f.keep = [first](const Flow& flow) {
    return flow.src / 2 == first / 2 || flow.dst / 2 == first / 2;
  };
  f.gpus = 4;
  return f;
}

TEST(UnnamedTask, KeepsItsIdGpuAndLabelsAndIsNamedByReference) {
  Dag dag;
  dag.set_fragment(owning(0));
  ASSERT_FALSE(dag.holds_tasks_of(2));
  ASSERT_TRUE(dag.holds_tasks_of(1));
  EXPECT_FALSE(dag.has_unnamed_nodes());
  TaskLabels labels;
  labels.kind = TaskKind::kForward;
  labels.job = 1;
  labels.iteration = 3;
  const NodeRef x0 = dag.add_task("x0", 0, 5, {});
  const NodeRef y2 = dag.add_unnamed_task(2, labels);
  EXPECT_EQ(y2, (NodeRef{NodeRef::Kind::kTask, 1}));
  EXPECT_TRUE(dag.has_unnamed_nodes());
  // GPU 2 sends in "c", after its task: named by reference, with a name.
  const std::vector<Flow> c{{0, 1, 10}, {2, 3, 10}};
  dag.add_coflow("c", {}, 0, c, {Dag::reference(y2), "x0"});
  dag.resolve();
  dag.validate(4);
  ASSERT_EQ(dag.coflows()[0].after.size(), 2u);
  EXPECT_EQ(dag.coflows()[0].after[0], y2);
  EXPECT_EQ(dag.coflows()[0].after[1], x0);
  EXPECT_EQ(dag.task_count(), 2u);
  EXPECT_EQ(dag.tasks().size(), 1u);
  EXPECT_FALSE(dag.holds_task(TaskId{1}));
  EXPECT_EQ(dag.task_gpu(TaskId{1}), 2u);
  EXPECT_EQ(dag.name(y2), Dag::kDroppedName);
  EXPECT_EQ(dag.task_iterations(), 4u);
  EXPECT_EQ(dag.training_jobs(), 2u);
  EXPECT_EQ(dag.gpus_used(), 4u);
  EXPECT_FALSE(dag.find(std::string(Dag::kDroppedName)));
}

TEST(UnnamedTask, NamedTasksOfOtherRanksKeepTheirNamesAndDependenciesAmongUnnamedOnes) {
  // The ends of the other ranks' names and dependencies are stored only up
  // to the last task that has any: a named task after unnamed ones fills
  // theirs in, and unnamed ones after it read its ends as theirs. The check
  // for cycles reads every task's dependencies, the other ranks' too.
  auto build = [](Dag& dag, const std::string& first_after) {
    dag.set_fragment(owning(0));
    dag.add_task("x0", 0, 5, {});
    const NodeRef u1 = dag.add_unnamed_task(2);
    const NodeRef n2 = dag.add_task("n2", 2, 5, {first_after});
    const NodeRef u3 = dag.add_unnamed_task(3);
    const NodeRef n4 = dag.add_task("n4", 3, 5, {"n2", "x0"});
    const NodeRef u5 = dag.add_unnamed_task(2);
    dag.resolve();
    EXPECT_EQ(dag.name(u1), Dag::kDroppedName);
    EXPECT_EQ(dag.name(n2), "n2");
    EXPECT_EQ(dag.name(u3), Dag::kDroppedName);
    EXPECT_EQ(dag.name(n4), "n4");
    EXPECT_EQ(dag.name(u5), Dag::kDroppedName);
    EXPECT_EQ(dag.find("n4"), n4);
    EXPECT_EQ(dag.task_gpu(TaskId{u3.index}), 3u);
    EXPECT_EQ(dag.task_gpu(TaskId{u5.index}), 2u);
  };
  Dag acyclic;
  build(acyclic, "x0");
  acyclic.validate(4);
  Dag cyclic;  // n2 after n4 (named before it was added), n4 after n2
  build(cyclic, "n4");
  const std::string error = error_of([&] { cyclic.validate(4); });
  EXPECT_TRUE(Has(error, "cycle")) << error;
  EXPECT_TRUE(Has(error, "task \"n2\"")) << error;
  EXPECT_TRUE(Has(error, "task \"n4\"")) << error;
  EXPECT_FALSE(Has(error, std::string(Dag::kDroppedName))) << error;
}

TEST(UnnamedTask, IsOnlyAnotherRanksAndNoNameLooksLikeAReference) {
  Dag whole;
  EXPECT_TRUE(Has(error_of([&] { whole.add_unnamed_task(2); }), "internal: an unnamed task"));
  Dag part;
  part.set_fragment(owning(0));
  EXPECT_TRUE(Has(error_of([&] { part.add_unnamed_task(1); }), "internal: an unnamed task"));
  EXPECT_TRUE(Has(error_of([&] { part.add_unnamed_task(7); }), "internal: an unnamed task"))
      << "a GPU beyond the fabric is held, so that every rank names it";
  EXPECT_EQ(error_of([&] { whole.add_task(std::string("\0t", 2), 0, 1, {}); }),
            "a task or coflow name must not start with a NUL character");
  // A reference to a node not yet added is the generator's mistake.
  EXPECT_TRUE(Has(error_of([&] {
                    whole.add_task("t", 0, 1, {Dag::reference({NodeRef::Kind::kTask, 5})});
                  }),
                  "internal: a reference to a node not yet added"));
}

/// Fragment `first` of a DAG where GPUs 0 and 2 each run a task and send in
/// "c", which waits for both tasks: named where the fragment holds the task,
/// by reference where not, in the order `zero_first` says.
Dag two_ranks_fragment(GpuId first, bool zero_first, bool t2_on_3 = false) {
  Dag dag;
  dag.set_fragment(owning(first));
  auto add = [&](const std::string& name, GpuId gpu) {
    return dag.holds_tasks_of(gpu) ? (dag.add_task(name, gpu, 1, {}), name)
                                   : Dag::reference(dag.add_unnamed_task(gpu));
  };
  const std::string t0 = add("t0", 0), t2 = add("t2", t2_on_3 ? 3 : 2);
  const std::vector<Flow> c{{0, 1, 10}, {2, 3, 10}};
  dag.add_coflow("c", {}, 0, c, zero_first ? std::vector{t0, t2} : std::vector{t2, t0});
  dag.resolve();
  dag.validate(4);
  return dag;
}

TEST(UnnamedTask, TheRanksCheckTheirSendersDependenciesInAnyOrder) {
  // Each rank's own task concerns its own sender; the lists differ in order,
  // as a generator's sorted by name do when one entry is a reference.
  const Dag first = two_ranks_fragment(0, true), second = two_ranks_fragment(2, false);
  ASSERT_NE(first.coflows()[0].after[0], second.coflows()[0].after[0]) << "the same order";
  EXPECT_NE(first.sender_dependencies()[0], 0u);
  EXPECT_NE(second.sender_dependencies()[0], 0u);
  EXPECT_NO_THROW(first.check_sender_dependencies(either(first, second)));
  EXPECT_NO_THROW(second.check_sender_dependencies(either(second, first)));
  // "t2" on GPU 3, which only receives in "c": refused, by every rank.
  const Dag bad_first = two_ranks_fragment(0, true, true);
  const Dag bad_second = two_ranks_fragment(2, false, true);
  for (const Dag* dag : {&bad_first, &bad_second}) {
    EXPECT_TRUE(
        Has(error_of([&] { dag->check_sender_dependencies(either(bad_first, bad_second)); }),
            "which involves none of its sending GPUs"));
  }
}

}  // namespace
}  // namespace shoal::work
