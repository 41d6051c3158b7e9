// The dependency tracker alone: what becomes ready where, sender groups and
// their flows, and a rank that tracks only some GPUs.
#include "shoal/exec/dependency_tracker.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "shoal/core/error.hpp"

namespace shoal::exec {
namespace {

using work::FlowId;
using work::TaskId;

// GPU 0 computes a, then coflow x sends 0->1, 0->2 and 2->1 (after a, which
// concerns sender 0 only); b on GPU 1 waits for x there, c on GPU 2 waits
// for x there and for its own task d.
work::Dag example() {
  work::Dag dag;
  dag.add_task("a", 0, 10, {});
  const std::vector<work::Flow> flows{{0, 1, 100}, {0, 2, 100}, {2, 1, 100}};
  dag.add_coflow("x", {}, 0, flows, {"a"});
  dag.add_task("b", 1, 10, {"x"});
  dag.add_task("d", 2, 10, {});
  dag.add_task("c", 2, 10, {"x", "d"});
  dag.resolve();
  return dag;
}

std::vector<std::uint32_t> ids(const auto& list) {
  std::vector<std::uint32_t> out;
  for (const auto id : list) out.push_back(id);
  return out;
}

TEST(DependencyTracker, ReleasesWhatEachCompletionAllowsAtItsGpu) {
  const work::Dag dag = example();
  DependencyTracker tracker(dag, [](work::GpuId) { return true; });
  DependencyTracker::Ready ready;
  tracker.initial(ready);
  EXPECT_EQ(ids(ready.tasks), (std::vector<std::uint32_t>{0, 2}));  // a and d
  ASSERT_EQ(ready.groups.size(), 1u);  // GPU 2's sends wait for nothing
  const SenderGroup at2 = tracker.group(ready.groups[0]);
  EXPECT_EQ(at2.gpu, 2u);
  EXPECT_EQ(ids(at2.flows), (std::vector<std::uint32_t>{2}));
  ASSERT_EQ(tracker.group_count(), 2u);
  // Tasks a, b, d, c and x at GPUs 0, 1 and 2.
  EXPECT_EQ(tracker.pending(), 7u);

  ready.clear();
  tracker.task_done(TaskId{0}, ready);  // a: GPU 0's sends go
  EXPECT_TRUE(ready.tasks.empty());
  ASSERT_EQ(ready.groups.size(), 1u);
  const SenderGroup at0 = tracker.group(ready.groups[0]);
  EXPECT_EQ(at0.gpu, 0u);
  EXPECT_EQ(ids(at0.flows), (std::vector<std::uint32_t>{0, 1}));

  ready.clear();
  tracker.flow_done_at(1, work::CoflowId{0}, ready);             // 0->1 at its receiver
  tracker.flow_done_at(2, work::CoflowId{0}, ready);             // 0->2 at its receiver
  tracker.flow_done_at(1, work::CoflowId{0}, ready);             // 2->1: x is done at GPU 1
  EXPECT_EQ(ids(ready.tasks), (std::vector<std::uint32_t>{1}));  // b
  ready.clear();
  tracker.flow_done_at(2, work::CoflowId{0}, ready);  // 2->1 acknowledged: done at GPU 2
  EXPECT_TRUE(ready.tasks.empty());                   // c still waits for d
  tracker.task_done(TaskId{2}, ready);
  EXPECT_EQ(ids(ready.tasks), (std::vector<std::uint32_t>{3}));  // c
  ready.clear();
  tracker.flow_done_at(0, work::CoflowId{0}, ready);
  tracker.flow_done_at(0, work::CoflowId{0}, ready);  // both of GPU 0's acknowledged
  for (const std::uint32_t t : {1u, 3u}) tracker.task_done(TaskId{t}, ready);
  EXPECT_TRUE(ready.tasks.empty());
  EXPECT_EQ(tracker.pending(), 0u);
  // x never had a flow at GPU 3.
  EXPECT_THROW(tracker.flow_done_at(3, work::CoflowId{0}, ready), Error);
}

TEST(DependencyTracker, TracksOnlyTheGpusItOwns) {
  const work::Dag dag = example();
  DependencyTracker tracker(dag, [](work::GpuId g) { return g == 2; });
  DependencyTracker::Ready ready;
  tracker.initial(ready);
  EXPECT_EQ(ids(ready.tasks), (std::vector<std::uint32_t>{2}));  // d only
  ASSERT_EQ(tracker.group_count(), 1u);
  EXPECT_EQ(tracker.group(SenderGroupId{0}).gpu, 2u);
  EXPECT_EQ(tracker.pending(), 3u);  // d, c and x at GPU 2
  EXPECT_THROW(tracker.flow_done_at(1, work::CoflowId{0}, ready), Error);
}

// Coflow y's senders, in flow order 2, 0, 1, 2, 0, each wait for the
// dependencies that concern them, task and coflow dependencies mixed in
// `after`: t0 and x at GPU 0, t1 and x at GPU 1, x, z and t2 at GPU 2.
TEST(DependencyTracker, EachSenderWaitsForItsOwnDependencies) {
  work::Dag dag;
  dag.add_task("t0", 0, 10, {});
  dag.add_task("t1", 1, 10, {});
  dag.add_task("t2", 2, 10, {});
  const std::vector<work::Flow> x{{0, 1, 100}, {1, 2, 100}};
  dag.add_coflow("x", {}, 0, x, {});
  const std::vector<work::Flow> z{{3, 2, 100}};
  dag.add_coflow("z", {}, 0, z, {});
  const std::vector<work::Flow> y{{2, 0, 100}, {0, 1, 100}, {1, 2, 100}, {2, 1, 100}, {0, 2, 100}};
  dag.add_coflow("y", {}, 0, y, {"t1", "x", "t0", "z", "t2"});
  dag.resolve();
  dag.validate(4);
  DependencyTracker tracker(dag, [](work::GpuId) { return true; });
  DependencyTracker::Ready ready;
  tracker.initial(ready);
  EXPECT_EQ(ids(ready.groups), (std::vector<std::uint32_t>{0, 1, 2}));  // x at 0 and 1, z at 3
  // y's groups by GPU, each its flows in order (y's flows are 3..7).
  ASSERT_EQ(tracker.group_count(), 6u);
  const std::vector<std::vector<std::uint32_t>> flows{{4, 7}, {5}, {3, 6}};
  for (std::uint32_t g = 0; g < 3; ++g) {
    const SenderGroup group = tracker.group(SenderGroupId{3 + g});
    EXPECT_EQ(group.gpu, g);
    EXPECT_EQ(ids(group.flows), flows[g]);
  }
  auto step = [&](auto&& done) {
    ready.clear();
    done();
    return ids(ready.groups);
  };
  const std::vector<std::uint32_t> none;
  EXPECT_EQ(step([&] { tracker.task_done(TaskId{0}, ready); }), none);
  EXPECT_EQ(step([&] { tracker.flow_done_at(0, work::CoflowId{0}, ready); }),
            (std::vector<std::uint32_t>{3}));
  EXPECT_EQ(step([&] { tracker.task_done(TaskId{1}, ready); }), none);
  EXPECT_EQ(step([&] { tracker.flow_done_at(1, work::CoflowId{0}, ready); }), none);
  EXPECT_EQ(step([&] { tracker.flow_done_at(1, work::CoflowId{0}, ready); }),
            (std::vector<std::uint32_t>{4}));
  EXPECT_EQ(step([&] { tracker.task_done(TaskId{2}, ready); }), none);
  EXPECT_EQ(step([&] { tracker.flow_done_at(2, work::CoflowId{1}, ready); }), none);
  EXPECT_EQ(step([&] { tracker.flow_done_at(2, work::CoflowId{0}, ready); }),
            (std::vector<std::uint32_t>{5}));
}

}  // namespace
}  // namespace shoal::exec
