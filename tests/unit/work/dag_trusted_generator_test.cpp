// A fragment whose generator is trusted (Dag::trust_generator, as the
// training generator's): it keeps of each coflow only what its rank's run
// needs, while a whole DAG keeps and checks everything.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_checks.hpp"
#include "shoal/work/dag.hpp"
#include "work/first_pair_fragment.hpp"

namespace shoal::work {
namespace {

using shoal::test::error_of;
using shoal::test::Has;

/// Tasks t0 (GPU 0) and t2 (GPU 2, unnamed in a fragment that does not hold
/// it); "far" between GPUs 2 and 3 only; "in" sent from 2 to 0; "out" sent
/// by 0 and 2, after t0, t2, "far", "in" and "late", which comes after it.
void build(Dag& dag) {
  dag.trust_generator();
  dag.add_task("t0", 0, 5, {});
  std::string t2 = "t2";
  if (dag.holds_tasks_of(2)) {
    dag.add_task(t2, 2, 5, {});
  } else {
    t2 = Dag::reference(dag.add_unnamed_task(2));
  }
  const std::vector<Flow> far{{2, 3, 10}}, in{{2, 0, 10}}, out{{0, 2, 10}, {2, 1, 10}},
      late{{0, 3, 10}};
  dag.add_coflow("far", {}, 0, far, {t2});
  dag.add_coflow("in", {}, 0, in, {t2, "far"});
  dag.add_coflow("out", {}, 0, out, {"t0", t2, "far", "in", "late"});
  dag.add_coflow("late", {}, 0, late, {});
  dag.resolve();
  dag.validate(4);
}

constexpr NodeRef kT0{NodeRef::Kind::kTask, 0}, kIn{NodeRef::Kind::kCoflow, 1},
    kLate{NodeRef::Kind::kCoflow, 3};

TEST(TrustedGenerator, AWholeDagKeepsEveryNameAndDependency) {
  Dag dag;
  build(dag);
  EXPECT_FALSE(dag.trusts_generator());
  EXPECT_FALSE(dag.has_unnamed_nodes());
  EXPECT_EQ(dag.coflows()[0].name, "far");
  EXPECT_EQ(dag.coflows()[0].after.size(), 1u);
  EXPECT_EQ(dag.coflows()[1].after.size(), 2u);
  EXPECT_EQ(dag.coflows()[2].after.size(), 5u);
}

TEST(TrustedGenerator, AFragmentKeepsOnlyWhatItsSendersWaitOn) {
  Dag dag;
  dag.set_fragment(test::owning_first_two());
  build(dag);
  ASSERT_TRUE(dag.trusts_generator());
  EXPECT_TRUE(dag.has_unnamed_nodes());
  ASSERT_EQ(dag.coflows().size(), 4u);
  EXPECT_EQ(dag.flow_count(), 5u);
  EXPECT_EQ(dag.held_count(), 4u);
  EXPECT_EQ(dag.total_bytes(), 50);
  // "far" has no flow here: no name, no dependencies, not found.
  EXPECT_EQ(dag.coflows()[0].name, Dag::kDroppedCoflowName);
  EXPECT_TRUE(dag.coflows()[0].after.empty());
  EXPECT_FALSE(dag.find("far"));
  // "in" is received here, sent elsewhere: its name, no dependencies.
  EXPECT_EQ(dag.coflows()[1].name, "in");
  EXPECT_EQ(dag.find("in"), kIn);
  EXPECT_TRUE(dag.coflows()[1].after.empty());
  // "out" is sent here: its own task, "in", and "late" named before it was
  // added; not the other rank's task, nor "far".
  EXPECT_EQ(dag.coflows()[2].name, "out");
  EXPECT_EQ(std::vector<NodeRef>(dag.coflows()[2].after.begin(), dag.coflows()[2].after.end()),
            (std::vector<NodeRef>{kT0, kIn, kLate}));
  // The other rank's task's GPU goes with its dependencies.
  EXPECT_EQ(dag.task_gpu(TaskId{1}), 2u);
  dag.drop_foreign_dependencies();
  EXPECT_TRUE(Has(error_of([&] { (void)dag.task_gpu(TaskId{1}); }), "internal"));
  EXPECT_EQ(dag.task_gpu(TaskId{0}), 0u);
}

TEST(TrustedGenerator, IsTrustedBeforeItsFirstNode) {
  Dag dag;
  dag.add_task("t0", 0, 5, {});
  EXPECT_TRUE(Has(error_of([&] { dag.trust_generator(); }), "internal"));
}

TEST(TrustedGenerator, AFragmentStillRefusesATaskWaitingOnAnUnknownName) {
  Dag dag;
  dag.set_fragment(test::owning_first_two());
  dag.trust_generator();
  dag.add_task("t0", 0, 5, {"nowhere"});
  EXPECT_TRUE(Has(error_of([&] { dag.resolve(); }), "\"nowhere\", which does not exist"));
}

}  // namespace
}  // namespace shoal::work
