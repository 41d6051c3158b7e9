// The resource guard counts what one rank holds (net/rank_share.hpp): the
// flows its GPUs send, the links it sends on and its GPUs. Over all ranks the
// shares add up to the whole run, and the network's estimate for a rank falls
// with its share.
#include "shoal/net/rank_share.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "shoal/net/network.hpp"
#include "shoal/net/ports.hpp"
#include "work/training_cases.hpp"

namespace shoal::net {
namespace {

using work::test_jobs::generate;
using work::test_jobs::small_moe;

struct Case {
  topo::Fabric fabric;
  work::Dag dag;
};

Case small_case() {
  work::JobSpec job = small_moe();
  work::Dag dag = generate(job, 64);
  return {work::test_jobs::fat_tree_64(), std::move(dag)};
}

/// Four ranks: GPUs by server blocks, switches dealt round.
std::vector<std::int32_t> four_ranks(const topo::Fabric& fabric) {
  std::vector<std::int32_t> owner(fabric.node_count(), -1);
  for (work::GpuId g = 0; g < fabric.gpu_count(); ++g) {
    owner[fabric.gpu_node(g)] = static_cast<std::int32_t>(g / 16);
  }
  std::int32_t next = 0;
  for (std::int32_t& o : owner) {
    if (o < 0) o = next++ % 4;
  }
  return owner;
}

TEST(RankShare, SharesAddUpToTheWholeRun) {
  const Case c = small_case();
  const std::vector<std::int32_t> owner = four_ranks(c.fabric);
  const RankShare whole = RankShare::whole(c.fabric, c.dag);
  EXPECT_EQ(whole.flows_sent, c.dag.all_flows().size());
  EXPECT_EQ(whole.links, c.fabric.link_count());
  EXPECT_EQ(whole.gpus, 64u);
  RankShare sum;
  for (int r = 0; r < 4; ++r) {
    const RankShare share = RankShare::of(c.fabric, c.dag, owner, r);
    EXPECT_EQ(share.gpus, 16u);
    EXPECT_GT(share.flows_sent, 0u);  // every rank sends
    EXPECT_LT(share.flows_sent, whole.flows_sent);
    EXPECT_GT(share.links, 0u);
    sum.flows_sent += share.flows_sent;
    sum.links += share.links;
    sum.gpus += share.gpus;
  }
  EXPECT_EQ(sum.flows_sent, whole.flows_sent);
  EXPECT_EQ(sum.links, whole.links);
  EXPECT_EQ(sum.gpus, whole.gpus);
  // One rank holding every node is the whole run.
  const std::vector<std::int32_t> one(c.fabric.node_count(), 0);
  const RankShare all = RankShare::of(c.fabric, c.dag, one, 0);
  EXPECT_EQ(all.flows_sent, whole.flows_sent);
  EXPECT_EQ(all.links, whole.links);
  EXPECT_EQ(all.gpus, whole.gpus);
}

// A port and its cells in flight are counted only for the links a rank sends
// on, and the instant network, which queues no cells, counts none.
TEST(RankShare, PortsCountOnlyTheLinksARankSendsOn) {
  const Case c = small_case();
  NetworkOptions options;
  options.cell_size = 4096;
  options.buffer_per_class = 64 * 1024;
  const std::uint64_t links = c.fabric.link_count();
  const std::uint64_t all = Ports::estimate_bytes(c.fabric, c.dag, options, links);
  const std::uint64_t none = Ports::estimate_bytes(c.fabric, c.dag, options, 0);
  const std::uint64_t quarter = Ports::estimate_bytes(c.fabric, c.dag, options, links / 4);
  ASSERT_GT(all, none);
  const std::uint64_t per_link = (all - none) / links;
  EXPECT_EQ(all - none, per_link * links);
  EXPECT_EQ(quarter - none, per_link * (links / 4));
  // At least the 32 cells in flight of two classes' buffers.
  EXPECT_GE(per_link, 32 * sizeof(core::Event));

  NetworkOptions instant = options;
  instant.instant = true;
  const std::uint64_t instant_all = Ports::estimate_bytes(c.fabric, c.dag, instant, links);
  const std::uint64_t instant_none = Ports::estimate_bytes(c.fabric, c.dag, instant, 0);
  EXPECT_LT((instant_all - instant_none) / links, 32 * sizeof(core::Event));
  EXPECT_LT(instant_all - instant_none, all - none);
}

TEST(RankShare, TheNetworksEstimateFallsWithTheShare) {
  const Case c = small_case();
  const std::vector<std::int32_t> owner = four_ranks(c.fabric);
  NetworkOptions options;
  options.cell_size = 4096;
  const std::uint64_t whole =
      Network::estimate_bytes(c.fabric, c.dag, options, RankShare::whole(c.fabric, c.dag));
  for (int r = 0; r < 4; ++r) {
    const RankShare share = RankShare::of(c.fabric, c.dag, owner, r);
    const std::uint64_t part = Network::estimate_bytes(c.fabric, c.dag, options, share);
    EXPECT_LT(part, whole / 2);
    // It still counts its share's flows and ports.
    EXPECT_GE(part, share.flows_sent * Nic::kBytesPerFlow);
  }
}

}  // namespace
}  // namespace shoal::net
