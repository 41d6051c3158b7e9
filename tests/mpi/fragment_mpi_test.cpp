// A rank's fragment of the flows (exec/fragment.hpp) at N ranks: each rank
// holds every flow it sends, receives or counts, and fewer than all of them;
// and a run on the fragments is the same run as on whole DAGs.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "one_rank_run.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/exec/fragment.hpp"
#include "shoal/net/network.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_config.hpp"
#include "work/training_cases.hpp"

namespace shoal::exec {
namespace {

using work::test_jobs::generate;
using work::test_jobs::small_moe;

topo::Fabric fat_tree_64() {
  topo::FatTreeSpec spec;
  spec.base.gpus = 64;
  spec.base.gpus_per_server = 4;
  spec.radix = 16;  // 8 GPUs a leaf: 8 leaves, so every rank count cuts the job
  return topo::build_fat_tree(spec);
}

/// The small MoE job on fat_tree_64, whole and as this rank's fragment under
/// the topology partition.
struct Fragment {
  topo::Fabric fabric = fat_tree_64();
  work::Dag whole, part;
  core::Partition partition;
  RankFlows kept;

  Fragment(const core::Comm& world, const net::NetworkOptions& network)
      : partition(topo::partition_fabric(fabric, world.size(), "topology")) {
    work::JobSpec job = small_moe();
    whole = generate(job, 64);
    part = generate(job, 64);
    kept = keep_rank_flows(fabric, part, network, partition, world.rank());
  }
};

TEST(FragmentMpi, EachRankHoldsTheFlowsItSendsReceivesOrCounts) {
  const core::Comm world = core::Comm::world();
  const net::NetworkOptions network;
  const Fragment fragment(world, network);
  const auto& [fabric, whole, part, partition, kept] = fragment;
  if (world.size() == 1) {
    EXPECT_TRUE(part.whole());
    EXPECT_EQ(kept.held, whole.flow_count());
    return;
  }
  ASSERT_TRUE(kept.dropped) << "the rank dropped no flow: nothing tested";
  ASSERT_FALSE(part.whole());
  EXPECT_GT(kept.held, 0u);
  EXPECT_LT(kept.held, whole.flow_count());
  std::size_t held = 0;
  const std::vector<std::int32_t> owner = partition.entity_ranks(fabric.layout());
  const std::vector<topo::NodeId> inbound = net::Network::inbound_nodes(fabric, network);
  const auto mine = [&](topo::NodeId n) { return owner[n] == world.rank(); };
  for (std::uint32_t f = 0; f < whole.flow_count(); ++f) {
    const work::Flow& w = whole.flow(work::FlowId{f});
    const topo::NodeId counter = net::Network::counted_at(fabric, inbound, w.src, w.dst);
    ASSERT_EQ(part.flow_dst(work::FlowId{f}), w.dst);
    const bool touched =
        mine(fabric.gpu_node(w.src)) || mine(fabric.gpu_node(w.dst)) || mine(counter);
    ASSERT_EQ(part.holds(work::FlowId{f}), touched) << "flow " << f;
    if (touched) {
      EXPECT_EQ(part.flow(work::FlowId{f}).bytes, w.bytes);
      ++held;
    }
  }
  EXPECT_EQ(held, kept.held);
}

TEST(FragmentMpi, ARunOnFragmentsIsTheRunOnWholeDags) {
  const core::Comm world = core::Comm::world();
  net::NetworkOptions network;
  network.cell_size = 64 * 1024;
  network.check = true;
  const Fragment fragment(world, network);
  const auto& [fabric, whole, part, partition, kept] = fragment;
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
  if (world.rank() == 0) {
    EXPECT_EQ(b.results.bytes_delivered, whole.total_bytes());
  }
}

}  // namespace
}  // namespace shoal::exec
