// A rank's fragment of the flows (exec/fragment.hpp) at N ranks: each rank
// builds every flow it sends, receives or counts, and fewer than all of them,
// and counts without making those of the coflows that concern none of its GPUs;
// the ranks check together the rule their fragments share; and a run on the
// fragments is the same run as on whole DAGs, crux's keys included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "one_rank_run.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/core/error.hpp"
#include "shoal/exec/fragment.hpp"
#include "shoal/net/network.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_config.hpp"
#include "work/training_cases.hpp"

namespace shoal::exec {
namespace {

using work::test_jobs::eight_leaf_fat_tree;
using work::test_jobs::generate;
using work::test_jobs::small_moe;

/// The small MoE job on eight_leaf_fat_tree, whole and as this rank's fragment under
/// the topology partition (on one rank, whole too).
struct Fragment {
  topo::Fabric fabric = eight_leaf_fat_tree();
  work::Dag whole, part;
  core::Partition partition;
  work::JobSpec job = small_moe();  // as generate() completes it

  Fragment(const core::Comm& world, const net::NetworkOptions& network)
      : partition(topo::partition_fabric(fabric, world.size(), "topology")) {
    whole = generate(job, 64);
    build(world, network, part);
  }

  /// This rank's fragment, checked with the other ranks'.
  void build(const core::Comm& world, const net::NetworkOptions& network, work::Dag& dag) const {
    if (world.size() > 1) {
      dag.set_fragment(rank_fragment(fabric, network, partition, world.rank()));
    }
    work::add_training_job(job, dag);
    dag.resolve();
    dag.validate(64);
    check_sender_dependencies(world, dag);
  }
};

TEST(FragmentMpi, EachRankHoldsTheFlowsItSendsReceivesOrCounts) {
  const core::Comm world = core::Comm::world();
  const net::NetworkOptions network;
  const Fragment fragment(world, network);
  const auto& [fabric, whole, part, partition, job] = fragment;
  if (world.size() == 1) {
    EXPECT_TRUE(part.whole());
    return;
  }
  ASSERT_FALSE(part.whole());
  EXPECT_GT(part.held_count(), 0u);
  EXPECT_LT(part.held_count(), whole.flow_count()) << "the rank holds every flow: nothing tested";
  EXPECT_EQ(part.flow_count(), whole.flow_count());
  std::size_t held = 0;
  const std::vector<std::int32_t> owner = partition.entity_ranks(fabric.layout());
  const std::vector<topo::NodeId> inbound = net::Network::inbound_nodes(fabric, network);
  const auto mine = [&](topo::NodeId n) { return owner[n] == world.rank(); };
  for (std::uint32_t f = 0; f < whole.flow_count(); ++f) {
    const work::Flow& w = whole.flow(work::FlowId{f});
    const topo::NodeId counter = net::Network::counted_at(fabric, inbound, w.src, w.dst);
    const bool touched =
        mine(fabric.gpu_node(w.src)) || mine(fabric.gpu_node(w.dst)) || mine(counter);
    ASSERT_EQ(part.holds(work::FlowId{f}), touched) << "flow " << f;
    ASSERT_EQ(part.find_flow(work::FlowId{f}) != nullptr, touched) << "flow " << f;
    if (touched) {
      EXPECT_EQ(part.flow(work::FlowId{f}).bytes, w.bytes);
      EXPECT_EQ(part.flow(work::FlowId{f}).dst, w.dst);
      ++held;
    }
  }
  EXPECT_EQ(held, part.held_count());
  // Its tasks: those of its own GPUs; of the others, only their GPUs and
  // labels (the generator adds them unnamed).
  ASSERT_EQ(part.task_count(), whole.task_count());
  EXPECT_TRUE(part.has_unnamed_nodes());
  EXPECT_GT(part.tasks().size(), 0u);
  EXPECT_LT(part.tasks().size(), whole.task_count()) << "the rank holds every task: nothing tested";
  std::size_t tasks = 0;
  for (std::uint32_t t = 0; t < whole.task_count(); ++t) {
    const work::TaskId id{t};
    const work::ComputeTask& w = whole.task(id);
    const work::NodeRef node{work::NodeRef::Kind::kTask, t};
    ASSERT_EQ(part.holds_task(id), mine(fabric.gpu_node(w.gpu))) << "task " << t;
    EXPECT_EQ(part.task_gpu(id), w.gpu);
    if (!part.holds_task(id)) {
      EXPECT_EQ(part.name(node), work::Dag::kDroppedName);
      EXPECT_FALSE(part.find(w.name));
      continue;
    }
    EXPECT_EQ(part.name(node), w.name);
    EXPECT_EQ(part.find(w.name), node);
    ASSERT_EQ(part.held_task_id(tasks++), id);
    const work::ComputeTask& p = part.task(id);
    EXPECT_EQ(p.duration, w.duration);
    EXPECT_EQ(p.labels.iteration, w.labels.iteration);
    EXPECT_EQ(p.labels.micro_batch, w.labels.micro_batch);
    EXPECT_TRUE(std::ranges::equal(p.after, w.after)) << "task " << t;
  }
  // The generator is trusted (work::Dag::trust_generator): a coflow the
  // rank holds no flow of has no name or dependencies here, one it sends
  // nothing in no dependencies, and one it sends in those of the whole
  // DAG's that can concern its senders: its own tasks and the coflows it
  // holds a flow of. Another rank's task was named by reference, so a list
  // the generator sorted by name may be in another order.
  ASSERT_TRUE(part.trusts_generator());
  // The whole DAG's list as the fragment should keep it, sorted.
  const auto kept = [&](std::span<const work::NodeRef> after, bool sends) {
    std::vector<std::pair<int, std::uint32_t>> nodes;
    for (const work::NodeRef n : after) {
      const bool concerns_here = n.kind == work::NodeRef::Kind::kTask
                                     ? part.holds_task(work::TaskId{n.index})
                                     : !part.flows_of(part.coflows()[n.index]).empty();
      if (sends && concerns_here) nodes.emplace_back(static_cast<int>(n.kind), n.index);
    }
    std::sort(nodes.begin(), nodes.end());
    return nodes;
  };
  ASSERT_EQ(part.coflows().size(), whole.coflows().size());
  EXPECT_EQ(part.total_bytes(), whole.total_bytes());
  // The EP all-to-alls among GPUs none of which concerns the rank were
  // counted, not made: the same ids and bytes.
  EXPECT_GT(part.counted_coflows(), 0u) << "every coflow's flows made: nothing tested";
  std::size_t unnamed = 0, sent = 0;
  for (std::uint32_t c = 0; c < whole.coflows().size(); ++c) {
    const work::Coflow& p = part.coflows()[c];
    const work::Coflow& w = whole.coflows()[c];
    ASSERT_EQ(p.first_flow, w.first_flow) << "coflow " << w.name;
    ASSERT_EQ(p.flow_count, w.flow_count) << "coflow " << w.name;
    ASSERT_EQ(p.bytes, w.bytes) << "coflow " << w.name;
    const std::span<const work::Flow> held = part.flows_of(p);
    const bool sends =
        std::ranges::any_of(held, [&](const work::Flow& f) { return part.owns(f.src); });
    sent += sends ? 1 : 0;
    if (held.empty()) {
      ++unnamed;
      EXPECT_EQ(p.name, work::Dag::kDroppedCoflowName);
      EXPECT_FALSE(part.find(w.name));
      EXPECT_TRUE(p.after.empty());
      continue;
    }
    EXPECT_EQ(p.name, w.name);
    EXPECT_EQ(part.find(w.name), (work::NodeRef{work::NodeRef::Kind::kCoflow, c}));
    std::vector<std::pair<int, std::uint32_t>> here;
    for (const work::NodeRef n : p.after) here.emplace_back(static_cast<int>(n.kind), n.index);
    std::sort(here.begin(), here.end());
    ASSERT_EQ(here, kept(w.after, sends)) << "coflow " << w.name;
  }
  EXPECT_GT(unnamed, 0u) << "the rank holds a flow of every coflow: nothing tested";
  EXPECT_GT(sent, 0u);
  EXPECT_EQ(tasks, part.tasks().size());
  EXPECT_EQ(part.task_iterations(), whole.task_iterations());
  EXPECT_EQ(part.training_jobs(), whole.training_jobs());
  EXPECT_EQ(part.gpus_used(), whole.gpus_used());
}

TEST(FragmentMpi, TheRanksCheckTogetherThatADependencyConcernsASender) {
  const core::Comm world = core::Comm::world();
  const topo::Fabric fabric = eight_leaf_fat_tree();
  const core::Partition partition = topo::partition_fabric(fabric, world.size(), "topology");
  // GPU 63 sends "late" after "early", which it has no flow in: "early"
  // concerns only "late"'s other sender, GPU 0, which another rank owns.
  // Builds, checks (a whole DAG here, its fragments then together) and
  // returns whether it was a fragment.
  auto check = [&](const std::vector<std::string>& after) {
    work::Dag dag;
    if (world.size() > 1) {
      dag.set_fragment(rank_fragment(fabric, net::NetworkOptions{}, partition, world.rank()));
    }
    const std::vector<work::Flow> early{{0, 1, 1000}}, late{{0, 2, 1000}, {63, 62, 1000}};
    dag.add_coflow("early", {}, 0, early, {});
    dag.add_task("t1", 1, 10, {"early"});
    dag.add_coflow("late", {}, 0, late, after);
    dag.resolve();
    dag.validate(64);
    check_sender_dependencies(world, dag);
    return !dag.whole();
  };
  EXPECT_EQ(check({"early"}), world.size() > 1);
  // "t1" runs on GPU 1, which sends nothing in "late": every rank says so.
  try {
    check({"t1"});
    ADD_FAILURE() << "no error on rank " << world.rank();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "coflow \"late\" depends on task \"t1\", which involves none of its sending GPUs");
  }
}

TEST(FragmentMpi, EveryRankNamesACycleThroughOtherRanksTasks) {
  const core::Comm world = core::Comm::world();
  const topo::Fabric fabric = eight_leaf_fat_tree();
  const core::Partition partition = topo::partition_fabric(fabric, world.size(), "topology");
  // 0 -> 63 ("there") feeds a task on GPU 63, whose reply (63 -> 0, "back")
  // feeds a task on GPU 0 that "there" waits for: one cycle through both ends
  // of the fabric, which different ranks own.
  work::Dag dag;
  if (world.size() > 1) {
    dag.set_fragment(rank_fragment(fabric, net::NetworkOptions{}, partition, world.rank()));
  }
  const std::vector<work::Flow> there{{0, 63, 1000}}, back{{63, 0, 1000}};
  dag.add_coflow("there", {}, 0, there, {"t0"});
  dag.add_task("t63", 63, 10, {"there"});
  dag.add_coflow("back", {}, 0, back, {"t63"});
  dag.add_task("t0", 0, 10, {"back"});
  dag.resolve();
  if (world.size() > 1) {
    EXPECT_EQ(dag.holds_task(work::TaskId{0}), dag.owns(63));
    EXPECT_FALSE(dag.owns(0) && dag.owns(63)) << "one rank holds both tasks: nothing tested";
  }
  try {
    dag.validate(64);
    ADD_FAILURE() << "no error on rank " << world.rank();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "the DAG has a cycle: task \"t63\" -> coflow \"there\" -> task \"t0\" -> "
              "coflow \"back\" -> task \"t63\" (each waits for the next)");
  }
}

TEST(FragmentMpi, CruxWeighsTheComputeOfEveryRanksTasks) {
  const core::Comm world = core::Comm::world();
  const topo::Fabric fabric = eight_leaf_fat_tree();
  const core::Partition partition = topo::partition_fabric(fabric, world.size(), "topology");
  // Two jobs, on GPUs 0-1 and 62-63 (the two ends of the fabric, which
  // different ranks own): job 0 computes ten times longer for the same bytes,
  // so crux ranks it first only where its tasks' compute is counted.
  auto build = [&](bool fragment) {
    work::Dag dag;
    if (fragment) {
      dag.set_fragment(rank_fragment(fabric, net::NetworkOptions{}, partition, world.rank()));
    }
    for (const std::uint32_t job : {0u, 1u}) {
      const work::GpuId g = job == 0 ? 0 : 62;
      const std::string j = std::to_string(job);
      work::CoflowLabels labels;
      labels.job = job;
      const std::vector<work::Flow> flows{{g, g + 1, 1'000'000}};
      dag.add_coflow("c" + j, labels, 0, flows, {});
      const Time compute = (job == 0 ? 1000 : 100) * kMicrosecond;
      dag.add_task("t" + j + "a", g, compute, {"c" + j});
      dag.add_task("t" + j + "b", g + 1, compute, {"c" + j});
    }
    dag.resolve();
    dag.validate(64);
    return dag;
  };
  const work::Dag whole = build(false);
  const work::Dag part = build(world.size() > 1);
  if (world.size() > 1) {
    EXPECT_FALSE(part.owns(0) && part.owns(63)) << "one rank holds both jobs: nothing tested";
  }
  sched::PolicyConfig crux;
  crux.crux = true;
  const std::vector<std::uint32_t> keys = sched::coflow_keys(whole, fabric, crux);
  EXPECT_EQ(sched::coflow_keys(part, fabric, crux, &world), keys);
  EXPECT_LT(keys[0], keys[1]) << "job 0, the more compute-intensive, first";
}

TEST(FragmentMpi, TheRanksFindTheMilestonesOfOtherRanksTasks) {
  const core::Comm world = core::Comm::world();
  const Fragment fragment(world, net::NetworkOptions{});
  const auto& [fabric, whole, part, partition, job] = fragment;
  // Every GPU's first task and last optimizer step: on several ranks, each
  // rank misses some of them.
  std::vector<Milestone> milestones;
  std::uint64_t missed = 0;
  for (const std::string at : {"j0.i0.g0.F0.L1.f.end", "j0.i0.g63.opt.start", "last-byte"}) {
    Milestone m{"m", at, std::nullopt,
                "config x.toml: milestone[" + std::to_string(milestones.size()) + "]"};
    if (at != "last-byte") {
      m.node = part.find(at.substr(0, at.rfind('.')));
      missed += m.node ? 0 : 1;
    }
    milestones.push_back(m);
  }
  std::uint64_t missed_anywhere = missed;
  world.sum_all(std::span(&missed, 1), std::span(&missed_anywhere, 1));
  if (world.size() > 1) {
    EXPECT_GT(missed_anywhere, 0u) << "every rank named every task";
  }
  find_milestones(world, part, milestones);
  EXPECT_EQ(milestones[0].node, whole.find("j0.i0.g0.F0.L1.f"));
  EXPECT_EQ(milestones[1].node, whole.find("j0.i0.g63.opt"));
  EXPECT_FALSE(milestones[2].node);
  // A name no rank has: every rank gives the error one rank gives.
  milestones.push_back({"m", "nowhere.end", std::nullopt, "config x.toml: milestone[3]"});
  try {
    find_milestones(world, part, milestones);
    if (world.size() > 1) {
      ADD_FAILURE() << "no error";
    }
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "config x.toml: milestone[3].at: no task or coflow named \"nowhere\" in the "
              "workload");
  }
}

/// 64 KiB cells, every port's queues and credits recounted: the runs compared.
net::NetworkOptions checked_cells() {
  net::NetworkOptions network;
  network.cell_size = 64 * 1024;
  network.check = true;
  return network;
}

TEST(FragmentMpi, ARunOnFragmentsIsTheRunOnWholeDags) {
  const core::Comm world = core::Comm::world();
  const net::NetworkOptions network = checked_cells();
  const Fragment fragment(world, network);
  const auto& [fabric, whole, part, partition, job] = fragment;
  if (world.size() > 1) {
    ASSERT_FALSE(part.whole());
  }
  exec::RecorderOptions recording;
  recording.flow_rows = true;
  recording.compute_rows = true;
  const test::OneRankRun a = test::run_on(world, "topology", fabric, whole, network, {}, {}, true,
                                          kTimeInfinity, core::EventOrder::kTime, recording);
  const test::OneRankRun b = test::run_on(world, "topology", fabric, part, network, {}, {}, true,
                                          kTimeInfinity, core::EventOrder::kTime, recording);
  test::expect_same_results(a, b);
  EXPECT_EQ(b.events, a.events);
  // As the CLI records: no task's times but per job and iteration, and a
  // milestone's task.
  recording = RecorderOptions::coflows_only();
  recording.watched_tasks = {work::TaskId{whole.find("j0.i0.g0.F0.L1.f")->index}};
  const test::OneRankRun c = test::run_on(world, "topology", fabric, whole, network, {}, {}, true,
                                          kTimeInfinity, core::EventOrder::kTime, recording);
  const test::OneRankRun d = test::run_on(world, "topology", fabric, part, network, {}, {}, true,
                                          kTimeInfinity, core::EventOrder::kTime, recording);
  test::expect_same_results(c, d);
  if (world.rank() == 0) {
    EXPECT_TRUE(d.results.task_end.empty());
    ASSERT_EQ(d.results.watched_end.size(), 1u);
    EXPECT_EQ(d.results.watched_end[0], a.results.task_end[recording.watched_tasks[0]]);
    EXPECT_GT(d.results.watched_end[0], 0);
    EXPECT_EQ(d.results.last_task_end,
              *std::max_element(a.results.task_end.begin(), a.results.task_end.end()));
    ASSERT_FALSE(d.results.job_iteration_end.empty());
    EXPECT_GT(d.results.job_iteration_end[0], 0);
  }
  // Crux weighs every flow: the ranks' fragments give the whole DAG's keys.
  sched::PolicyConfig crux;
  crux.crux = true;
  EXPECT_EQ(sched::coflow_keys(part, fabric, crux, &world),
            sched::coflow_keys(whole, fabric, crux));
  if (world.rank() == 0) {
    EXPECT_EQ(b.results.bytes_delivered, whole.total_bytes());
  }
}

TEST(FragmentMpi, ARankThatKeepsOnlyItsCoflowsRunsAsTheWholeDag) {
  // As `shoal run` keeps a fragment: each rank drops the coflows its GPUs
  // have no flow in. The policy's keys, learned from every rank, and the
  // results, merged from the ranks that hold each coflow, are the whole DAG's.
  const core::Comm world = core::Comm::world();
  const net::NetworkOptions network = checked_cells();
  const Fragment fragment(world, network);
  work::Dag own;
  fragment.build(world, network, own);
  own.drop_names();
  own.drop_unsent_coflow_dependencies();
  own.drop_unheld_coflows();
  const work::Dag& whole = fragment.whole;
  if (world.size() > 1) {
    ASSERT_TRUE(own.coflows_dropped());
    EXPECT_LT(own.coflows().size(), whole.coflows().size()) << "every coflow kept: tests nothing";
  }
  EXPECT_EQ(own.coflow_count(), whole.coflows().size());
  for (const std::string policy : {"hermod", "crux+hermod"}) {
    SCOPED_TRACE(policy);
    sched::PolicyConfig config;
    sched::parse_policy_name(policy, config);
    config.classes = 2;
    const sched::CoflowPriorities all = sched::coflow_priorities(whole, fragment.fabric, config);
    const sched::CoflowPriorities mine =
        sched::coflow_priorities(own, fragment.fabric, config, &world);
    ASSERT_EQ(mine.key.size(), own.coflows().size());
    EXPECT_EQ(mine.keys, all.keys);
    for (std::size_t slot = 0; slot < own.coflows().size(); ++slot) {
      const std::size_t id = own.held_coflow_id(slot);
      EXPECT_EQ(mine.key[slot], all.key[id]) << "coflow " << id;
      EXPECT_EQ(mine.cls[slot], all.cls[id]) << "coflow " << id;
    }
    RecorderOptions recording;
    recording.watched_coflows = {work::CoflowId{3}, work::CoflowId{0}};
    const test::OneRankRun a =
        test::run_on(world, "topology", fragment.fabric, whole, network, {}, {all.key, all.cls},
                     true, kTimeInfinity, core::EventOrder::kTime, recording);
    const test::OneRankRun b =
        test::run_on(world, "topology", fragment.fabric, own, network, {}, {mine.key, mine.cls},
                     true, kTimeInfinity, core::EventOrder::kTime, recording);
    test::expect_same_results(a, b);
    EXPECT_EQ(b.events, a.events);
    if (world.rank() == 0) {
      ASSERT_EQ(b.results.coflow_end.size(), whole.coflows().size());
      ASSERT_EQ(b.results.coflows.watched_outcomes.size(), 2u);
      EXPECT_EQ(b.results.coflows.watched_outcomes[1].end, b.results.coflow_end[3]);
      EXPECT_EQ(b.results.coflows.unfinished_flows, 0u);
    }
  }
}

}  // namespace
}  // namespace shoal::exec
