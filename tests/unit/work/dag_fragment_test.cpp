// A DAG built as a fragment (Dag::set_fragment): the flows it holds are the
// same, found by the same ids, each coflow's in order; every flow keeps its
// destination and every coflow its bytes; it checks the rules of the GPUs it
// owns, and leaves to the ranks together the rule its fragments share. It
// holds the tasks of its own GPUs and names the others.
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

/// `coflows` coflows of 1 to 70 flows each (some straddle a 64-flow word of
/// the held bits), GPU ids up to `top`.
void build(Dag& dag, int coflows, GpuId top) {
  for (int c = 0; c < coflows; ++c) {
    std::vector<Flow> flows;
    const int n = 1 + (c * 37) % 70;
    for (int i = 0; i < n; ++i) {
      const auto src = static_cast<GpuId>((c * 13 + i * 7) % 50);
      const auto dst = static_cast<GpuId>(top - static_cast<GpuId>((c + i) % 40));
      flows.push_back({src, dst, static_cast<Bytes>(1000 + c * 100 + i)});
    }
    dag.add_coflow("c" + std::to_string(c), {}, 0, flows, {});
  }
  dag.resolve();
}

/// Keeps flows by a rule that cuts coflows (some held whole, some in part,
/// some not at all).
bool kept(const Flow& f) { return f.src % 3 == 0 || f.dst % 7 == 1; }

/// What a fragment keeping `kept` holds: also the flows the check refuses
/// (here those to themselves), so that every rank names them.
bool held(const Flow& f) { return kept(f) || f.src == f.dst; }

/// A fragment that keeps `kept` on a fabric of `gpus` GPUs and owns none.
DagFragment fragment_of(GpuId gpus) {
  DagFragment fragment;
  fragment.keep = kept;
  fragment.owns.assign(gpus, false);
  fragment.gpus = gpus;
  return fragment;
}

void expect_fragment_of(const Dag& whole, const Dag& part) {
  ASSERT_FALSE(part.whole());
  EXPECT_EQ(part.flow_count(), whole.flow_count());
  EXPECT_EQ(part.total_bytes(), whole.total_bytes());
  EXPECT_EQ(part.gpus_used(), whole.gpus_used());
  std::size_t held_flows = 0, cut = 0;
  for (std::size_t c = 0; c < whole.coflows().size(); ++c) {
    const Coflow& a = whole.coflows()[c];
    const Coflow& b = part.coflows()[c];
    EXPECT_EQ(b.bytes, a.bytes);
    Bytes sum = 0;
    std::vector<std::pair<FlowId, Flow>> expected, seen;
    for (std::uint32_t i = 0; i < a.flow_count; ++i) {
      const FlowId f{a.first_flow + i};
      const Flow& w = whole.flow(f);
      sum += w.bytes;
      ASSERT_EQ(part.holds(f), held(w)) << "flow " << f;
      ASSERT_EQ(part.find_flow(f) != nullptr, held(w)) << "flow " << f;
      if (!held(w)) continue;
      EXPECT_EQ(part.find_flow(f), &part.flow(f));
      EXPECT_EQ(part.flow(f).dst, w.dst);
      expected.emplace_back(f, w);
      EXPECT_EQ(part.flow(f).src, w.src);
      EXPECT_EQ(part.flow(f).bytes, w.bytes);
      EXPECT_EQ(part.coflow_of(f), CoflowId{static_cast<std::uint32_t>(c)});
    }
    EXPECT_EQ(a.bytes, sum);
    part.for_each_flow(b, [&](FlowId f, const Flow& flow) {
      EXPECT_EQ(&flow, &part.flow(f));
      seen.emplace_back(f, flow);
    });
    ASSERT_EQ(seen.size(), expected.size()) << "coflow " << c;
    ASSERT_EQ(part.flows_of(b).size(), expected.size()) << "coflow " << c;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      EXPECT_EQ(seen[i].first, expected[i].first);
      EXPECT_EQ(seen[i].second.dst, expected[i].second.dst);
    }
    held_flows += expected.size();
    cut += !expected.empty() && expected.size() < a.flow_count;
  }
  EXPECT_GT(cut, 0u) << "no coflow held in part: nothing tested";
  EXPECT_LT(held_flows, whole.flow_count());
  EXPECT_EQ(part.held_count(), held_flows);
}

TEST(DagFragment, HoldsTheFlowsItKeepsByTheirIds) {
  for (const GpuId top : {GpuId{60}, GpuId{65535}, GpuId{70000}}) {  // 2- and 4-byte destinations
    Dag whole, part;
    build(whole, 200, top);
    part.set_fragment(fragment_of(top + 1));
    build(part, 200, top);
    expect_fragment_of(whole, part);
  }
}

TEST(DagFragment, IsSetBeforeItsFirstNodeAndNeverListedWhole) {
  Dag dag;
  dag.set_fragment(fragment_of(100));
  build(dag, 10, 60);
  EXPECT_THROW(dag.set_fragment(fragment_of(100)), Error);
  EXPECT_THROW((void)dag.all_flows(), Error);
  Dag late;
  build(late, 1, 60);
  EXPECT_THROW(late.set_fragment(fragment_of(100)), Error);
  Dag after_a_task;
  after_a_task.add_task("t", 0, 1, {});
  EXPECT_THROW(after_a_task.set_fragment(fragment_of(100)), Error);
}

/// Two GPUs' fragments of one DAG: GPU 0 sends "a" to 1, GPU 2 sends "b" to
/// 3, and "c" (from 0 and from 2) waits for `c_after`.
Dag two_sender_fragment(GpuId owned, const std::vector<std::string>& c_after) {
  DagFragment fragment;
  fragment.owns.assign(4, false);
  fragment.owns[owned] = fragment.owns[owned + 1] = true;
  fragment.keep = [owned](const Flow& f) {
    return f.src / 2 == owned / 2 || f.dst / 2 == owned / 2;
  };
  fragment.gpus = 4;
  Dag dag;
  dag.set_fragment(std::move(fragment));
  const std::vector<Flow> a{{0, 1, 10}}, b{{2, 3, 10}}, c{{0, 1, 10}, {2, 3, 10}};
  dag.add_coflow("a", {}, 0, a, {});
  dag.add_coflow("b", {}, 0, b, {});
  dag.add_task("t3", 3, 5, {"b"});
  dag.add_coflow("c", {}, 0, c, c_after);
  dag.resolve();
  return dag;
}

TEST(DagFragment, ChecksTheDependenciesOfItsSendersTogetherWithTheOthers) {
  // "b" concerns GPU 2, a sender of "c" that only the second fragment owns.
  const Dag first = two_sender_fragment(0, {"b"});
  const Dag second = two_sender_fragment(2, {"b"});
  first.validate(4);
  second.validate(4);
  EXPECT_EQ(first.sender_dependencies()[0], 0u) << "the first fragment alone cannot tell";
  EXPECT_NO_THROW(first.check_sender_dependencies(either(first, second)));
  // GPU 3 only receives in "c": "t3" concerns none of its senders, in either fragment.
  const Dag bad_first = two_sender_fragment(0, {"t3"});
  const Dag bad_second = two_sender_fragment(2, {"t3"});
  try {
    bad_first.check_sender_dependencies(either(bad_first, bad_second));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "coflow \"c\" depends on task \"t3\", which involves none of its sending GPUs");
  }
}

/// A fragment of 4 GPUs that owns GPUs 0 and 1.
DagFragment owning_gpus_0_and_1() {
  DagFragment f;
  f.owns = {true, true, false, false};
  f.keep = [](const Flow& flow) { return flow.src < 2 || flow.dst < 2; };
  f.gpus = 4;
  return f;
}

/// A fragment owning GPUs 0 and 1 of 4, with GPU 2's tasks "y2" (after
/// `y2_after`, named before it is added) and "x2", and GPU 0's "x0".
Dag tasks_fragment(bool fragment, const std::vector<std::string>& y2_after, GpuId x0_gpu = 0) {
  Dag dag;
  if (fragment) {
    dag.set_fragment(owning_gpus_0_and_1());
  }
  const std::vector<Flow> a{{0, 2, 10}};
  dag.add_coflow("a", {}, 0, a, {});
  TaskLabels labels;
  labels.kind = TaskKind::kForward;
  labels.job = 1;
  labels.iteration = 2;
  dag.add_task("y2", 2, 5, y2_after, labels);
  dag.add_task("x0", x0_gpu, 7, {"a"});
  dag.add_task("x2", 2, 5, {"a"});
  dag.resolve();
  return dag;
}

/// What validate() says, or "".
std::string check_of(const Dag& dag) {
  try {
    dag.validate(4);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DagFragment, HoldsTheTasksOfItsGpusAndNamesTheOthers) {
  const Dag whole = tasks_fragment(false, {"x2"});
  Dag part = tasks_fragment(true, {"x2"});
  EXPECT_EQ(check_of(part), "");
  ASSERT_EQ(part.task_count(), 3u);
  ASSERT_EQ(part.tasks().size(), 1u);
  const TaskId y2{0}, x0{1}, x2{2};
  EXPECT_FALSE(part.holds_task(y2));
  EXPECT_TRUE(part.holds_task(x0));
  EXPECT_FALSE(part.holds_task(x2));
  EXPECT_EQ(part.held_task_id(0), x0);
  EXPECT_EQ(part.task_slot(x0), 0u);
  EXPECT_EQ(part.task(x0).duration, 7);
  EXPECT_EQ(part.task_gpu(x2), 2u);
  EXPECT_EQ(part.task_gpu(y2), 2u);
  for (std::uint32_t t = 0; t < 3; ++t) {
    const NodeRef node{NodeRef::Kind::kTask, t};
    EXPECT_EQ(part.name(node), whole.name(node));
    EXPECT_EQ(part.find(whole.name(node)), node);
  }
  // What the recorder sizes by: every task's labels, held or not.
  EXPECT_EQ(part.task_iterations(), 3u);
  EXPECT_EQ(part.training_jobs(), 2u);
  EXPECT_EQ(part.task_iterations(), whole.task_iterations());
  EXPECT_EQ(part.gpus_used(), whole.gpus_used());
  part.drop_foreign_dependencies();
  EXPECT_EQ(part.task(x0).after.size(), 1u);
  EXPECT_THROW(part.validate(4), Error) << "the check for cycles needs what was dropped";
}

TEST(DagFragment, DropsTheNamesOfOtherGpusTasksAndTheIndexOnceBuilt) {
  const Dag whole = tasks_fragment(false, {"x2"});
  Dag part = tasks_fragment(true, {"x2"});
  ASSERT_EQ(check_of(part), "");
  part.drop_foreign_dependencies();
  const TaskId y2{0}, x0{1}, x2{2};
  const std::string held(part.name({NodeRef::Kind::kTask, x0}));
  part.drop_names();
  // Its own task and every coflow keep their names, for the reports.
  EXPECT_EQ(part.name({NodeRef::Kind::kTask, x0}), held);
  for (std::uint32_t c = 0; c < part.coflows().size(); ++c) {
    const NodeRef coflow{NodeRef::Kind::kCoflow, c};
    EXPECT_EQ(part.name(coflow), whole.name(coflow));
  }
  EXPECT_EQ(part.name({NodeRef::Kind::kTask, y2}), Dag::kDroppedName);
  EXPECT_EQ(part.name({NodeRef::Kind::kTask, x2}), Dag::kDroppedName);
  EXPECT_EQ(part.task_gpu(x2), 2u) << "another rank's task keeps its GPU";
  EXPECT_TRUE(Has(error_of([&] { (void)part.find(held); }), "internal: a name looked up after"));
  EXPECT_TRUE(Has(error_of([&] { part.add_task("late", 0, 1, {}); }),
                  "internal: a node added to a DAG whose names were dropped"));
}

TEST(DagFragment, ChecksTheTasksOfOtherGpusForCyclesAndNames) {
  // A cycle among tasks it does not hold ("y2" waits for "x2", which waits
  // for "a", after "y2"), found as in the whole DAG.
  auto cyclic = [](bool fragment) {
    Dag dag;
    if (fragment) {
      dag.set_fragment(owning_gpus_0_and_1());
    }
    const std::vector<Flow> a{{2, 3, 10}};
    dag.add_task("y2", 2, 5, {"x2"});
    dag.add_coflow("a", {}, 0, a, {"y2"});
    dag.add_task("x2", 2, 5, {"a"});
    dag.resolve();
    return dag;
  };
  const std::string cycle = check_of(cyclic(false));
  EXPECT_NE(cycle.find("the DAG has a cycle"), std::string::npos) << cycle;
  const Dag part = cyclic(true);
  EXPECT_EQ(part.tasks().size(), 0u) << "it holds a task of the cycle: nothing tested";
  EXPECT_EQ(check_of(part), cycle);
  // A name no node has, in a task it does not hold: the same error.
  auto unknown = [](bool fragment) {
    try {
      tasks_fragment(fragment, {"nowhere"});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(unknown(true), unknown(false));
  EXPECT_NE(unknown(true), "");
  // A task on a GPU outside the fabric is held, so that every rank names it.
  const Dag outside = tasks_fragment(true, {"x2"}, 9);
  EXPECT_TRUE(outside.holds_task(TaskId{1}));
  EXPECT_EQ(check_of(outside), check_of(tasks_fragment(false, {"x2"}, 9)));
  EXPECT_NE(check_of(outside), "");
}

}  // namespace
}  // namespace shoal::work
