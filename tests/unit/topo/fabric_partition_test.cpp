// The fabric-aware partition strategies (partition_fabric): servers kept with their
// leaf or pod, switches spread, the fallbacks, and the errors.
#include "shoal/topo/fabric_config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "error_checks.hpp"
#include "fabric_config_test_support.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::topo {
namespace {

using namespace fabric_config_test;
using shoal::test::error_of;
using shoal::test::Has;

/// The atom of node v: a server's when v is a GPU or NVSwitch, else its own.
core::AtomId atom_of(const Fabric& f, NodeId v) { return f.layout().atom_of(v); }

/// The leaf switch node a GPU's NIC reaches.
NodeId leaf_of(const Fabric& f, GpuId g) { return f.link(f.nic_links(g).front()).to; }

void expect_every_rank_used(const Fabric& f, const core::Partition& p, int ranks) {
  const auto per_rank = p.entities_per_rank(f.layout());
  ASSERT_EQ(per_rank.size(), static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) EXPECT_GT(per_rank[r], 0) << "rank " << r;
}

TEST(PartitionFabric, TwoTierKeepsServersWithTheirLeaf) {
  const Fabric f = build_fat_tree(fat_spec(2, 16, 128, 2));  // 16 leaves of 4 servers, 8 spines
  const NodeId first_leaf = 128 + 64;
  for (const int ranks : {2, 3, 4, 5, 16}) {
    SCOPED_TRACE(ranks);
    const core::Partition p = partition_fabric(f, ranks, "topology");
    EXPECT_EQ(p.ranks(), ranks);
    EXPECT_EQ(p.description(), "topology");
    expect_every_rank_used(f, p, ranks);
    for (GpuId g = 0; g < 128; ++g) {
      EXPECT_EQ(p.rank_of_atom(atom_of(f, f.gpu_node(g))),
                p.rank_of_atom(atom_of(f, leaf_of(f, g))))
          << "GPU " << g;
    }
    // Leaves in contiguous, balanced blocks.
    std::vector<int> leaves_on(ranks, 0);
    int previous = 0;
    for (std::uint32_t l = 0; l < 16; ++l) {
      const int r = p.rank_of_atom(atom_of(f, first_leaf + l));
      EXPECT_GE(r, previous) << "leaf " << l;
      EXPECT_LE(r, previous + 1) << "leaf " << l;
      previous = r;
      ++leaves_on[r];
    }
    const auto [lo, hi] = std::minmax_element(leaves_on.begin(), leaves_on.end());
    EXPECT_LE(*hi - *lo, 1);
    // Spines round-robin.
    for (std::uint32_t s = 0; s < 8; ++s) {
      EXPECT_EQ(p.rank_of_atom(atom_of(f, first_leaf + 16 + s)), static_cast<int>(s) % ranks)
          << "spine " << s;
    }
    EXPECT_EQ(core::lookahead(f.layout(), p), kMicrosecond);
  }
  // Four ranks: four leaves each.
  const core::Partition p = partition_fabric(f, 4, "topology");
  for (std::uint32_t l = 0; l < 16; ++l) {
    EXPECT_EQ(p.rank_of_atom(atom_of(f, first_leaf + l)), static_cast<int>(l / 4)) << l;
  }
}

TEST(PartitionFabric, ThreeTierKeepsPodsTogether) {
  const Fabric f = build_fat_tree(fat_spec(3, 8, 128, 8));  // 8 pods: 4 leaves, 4 aggs each
  const NodeId first_leaf = 128 + 16;
  for (const int ranks : {2, 3, 4, 8}) {
    SCOPED_TRACE(ranks);
    const core::Partition p = partition_fabric(f, ranks, "topology");
    expect_every_rank_used(f, p, ranks);
    std::vector<int> pod_rank(8, -1);
    for (NodeId v = first_leaf; v < f.node_count(); ++v) {
      const Node& n = f.node(v);
      const int r = p.rank_of_atom(atom_of(f, v));
      if (n.level == 3) {
        EXPECT_EQ(r, static_cast<int>(n.index) % ranks) << "core " << n.index;
        continue;
      }
      if (pod_rank[n.group] < 0) pod_rank[n.group] = r;
      EXPECT_EQ(r, pod_rank[n.group]) << "level " << int{n.level} << " switch " << n.index;
    }
    for (GpuId g = 0; g < 128; ++g) {
      EXPECT_EQ(p.rank_of_atom(atom_of(f, f.gpu_node(g))), pod_rank[g / 16]) << "GPU " << g;
    }
    for (std::uint32_t pod = 1; pod < 8; ++pod) {
      EXPECT_GE(pod_rank[pod], pod_rank[pod - 1]);
      EXPECT_LE(pod_rank[pod], pod_rank[pod - 1] + 1);
    }
    EXPECT_EQ(core::lookahead(f.layout(), p), kMicrosecond);
  }
  const core::Partition p = partition_fabric(f, 4, "topology");
  for (std::uint32_t pod = 0; pod < 8; ++pod) {
    EXPECT_EQ(p.rank_of_atom(atom_of(f, f.gpu_node(pod * 16))), static_cast<int>(pod / 2)) << pod;
  }
}

TEST(PartitionFabric, PartialLastLeafAndPod) {
  {
    const Fabric f = build_fat_tree(fat_spec(2, 8, 18, 2));  // 5 leaves, the last with 2 GPUs
    const core::Partition p = partition_fabric(f, 5, "topology");
    expect_every_rank_used(f, p, 5);
    for (GpuId g = 0; g < 18; ++g) {
      EXPECT_EQ(p.rank_of_atom(atom_of(f, f.gpu_node(g))), static_cast<int>(g / 4)) << g;
    }
  }
  {
    const Fabric f = build_fat_tree(fat_spec(3, 8, 40, 4));  // 3 pods, the last with 8 GPUs
    const core::Partition p = partition_fabric(f, 3, "topology");
    expect_every_rank_used(f, p, 3);
    for (GpuId g = 0; g < 40; ++g) {
      EXPECT_EQ(p.rank_of_atom(atom_of(f, f.gpu_node(g))), static_cast<int>(g / 16)) << g;
      EXPECT_EQ(p.rank_of_atom(atom_of(f, f.gpu_node(g))),
                p.rank_of_atom(atom_of(f, leaf_of(f, g))));
    }
  }
}

TEST(PartitionFabric, OneRankHasNoLookahead) {
  for (const auto& spec : {fat_spec(2, 16, 128, 8), fat_spec(3, 8, 128, 4)}) {
    const Fabric f = build_fat_tree(spec);
    SCOPED_TRACE(f.description());
    const core::Partition p = partition_fabric(f, 1, "topology");
    for (core::AtomId a = 0; a < f.layout().atom_count(); ++a) EXPECT_EQ(p.rank_of_atom(a), 0);
    EXPECT_EQ(core::lookahead(f.layout(), p), kTimeInfinity);
  }
  FabricSpec base;
  base.gpus = 16;
  base.gpus_per_server = 8;
  const Fabric single = build_single_switch(base);
  const core::Partition p = partition_fabric(single, 1, "topology");
  EXPECT_EQ(core::lookahead(single.layout(), p), kTimeInfinity);
}

TEST(PartitionFabric, FewerLeavesThanRanksFallsBackToServers) {
  // 4 leaves of 2 servers (2 GPUs each), 4 spines; 6 ranks: each server is a
  // unit, in balanced contiguous blocks, and every switch is spread round-robin.
  const Fabric f = build_fat_tree(fat_spec(2, 8, 16, 2));
  const core::Partition p = partition_fabric(f, 6, "topology");
  EXPECT_EQ(p.description(), "topology");
  expect_every_rank_used(f, p, 6);
  std::vector<int> servers_on(6, 0);
  int previous = 0;
  for (std::uint32_t s = 0; s < 8; ++s) {
    const int r = p.rank_of_atom(s);
    EXPECT_GE(r, previous) << "server " << s;
    EXPECT_LE(r, previous + 1) << "server " << s;
    previous = r;
    ++servers_on[r];
  }
  const auto [lo, hi] = std::minmax_element(servers_on.begin(), servers_on.end());
  EXPECT_GE(*lo, 1);
  EXPECT_LE(*hi, 2);
  const NodeId first_switch = 16 + 8;
  for (NodeId v = first_switch; v < f.node_count(); ++v) {
    EXPECT_EQ(p.rank_of_atom(atom_of(f, v)), static_cast<int>(v - first_switch) % 6) << v;
  }
  EXPECT_EQ(core::lookahead(f.layout(), p), kMicrosecond);

  // 4 pods of 2 servers; 5 ranks.
  const Fabric three = build_fat_tree(fat_spec(3, 4, 16, 2));
  const core::Partition q = partition_fabric(three, 5, "topology");
  expect_every_rank_used(three, q, 5);
  EXPECT_EQ(core::lookahead(three.layout(), q), kMicrosecond);

  // A single switch: one server per rank, the switch on rank 0.
  FabricSpec base;
  base.gpus = 16;
  base.gpus_per_server = 8;
  const Fabric single = build_single_switch(base);
  const core::Partition r = partition_fabric(single, 2, "topology");
  EXPECT_EQ(r.rank_of_atom(0), 0);
  EXPECT_EQ(r.rank_of_atom(1), 1);
  EXPECT_EQ(r.rank_of_atom(2), 0);
  EXPECT_EQ(core::lookahead(single.layout(), r), kMicrosecond);
}

TEST(PartitionFabric, TooFewServers) {
  std::string e = error_of([] {
    partition_fabric(build_fat_tree(fat_spec(2, 8, 16, 4)), 5, "topology");  // 4 servers
  });
  EXPECT_TRUE(Has(e, "partition strategy topology: 4 servers cannot fill 5 ranks"));
  EXPECT_TRUE(Has(e, "use fewer ranks"));
  e = error_of([] {
    partition_fabric(build_fat_tree(fat_spec(3, 4, 16, 2)), 9, "topology");  // 8 servers
  });
  EXPECT_TRUE(Has(e, "partition strategy topology: 8 servers cannot fill 9 ranks"));
  FabricSpec base;
  base.gpus = 16;
  base.gpus_per_server = 8;
  e = error_of([&] { partition_fabric(build_single_switch(base), 3, "topology"); });
  EXPECT_TRUE(Has(e, "2 servers cannot fill 3 ranks"));
  // Block still can: 2 servers and a switch.
  EXPECT_EQ(partition_fabric(build_single_switch(base), 3, "block").ranks(), 3);
  e = error_of([] { partition_fabric(build_fat_tree(fat_spec(2, 8, 16, 4)), 0, "topology"); });
  EXPECT_TRUE(Has(e, "at least 1"));
}

TEST(PartitionFabric, BlockAndRoundRobinPassThrough) {
  const Fabric f = build_fat_tree(fat_spec(3, 8, 128, 8));
  for (const int ranks : {1, 3, 7}) {
    for (const auto& [name, strategy] : {std::pair{"block", core::Strategy::kBlock},
                                         std::pair{"round-robin", core::Strategy::kRoundRobin}}) {
      SCOPED_TRACE(std::string(name) + " " + std::to_string(ranks));
      const core::Partition got = partition_fabric(f, ranks, name);
      const core::Partition want = core::Partition::from_strategy(f.layout(), ranks, strategy);
      EXPECT_EQ(got.description(), name);
      for (core::AtomId a = 0; a < f.layout().atom_count(); ++a) {
        ASSERT_EQ(got.rank_of_atom(a), want.rank_of_atom(a)) << a;
      }
    }
  }
}

TEST(PartitionFabric, UnknownStrategy) {
  const Fabric f = build_fat_tree(fat_spec(2, 8, 32, 8));
  EXPECT_TRUE(Has(error_of([&] { partition_fabric(f, 2, "metis"); }),
                  "unknown partition strategy \"metis\" (use topology, weighted, block or "
                  "round-robin)"));
  EXPECT_TRUE(Has(error_of([&] { partition_fabric(f, 2, ""); }), "unknown partition strategy"));
  // Weighted is made from a workload's pilot run, which the fabric alone lacks.
  EXPECT_TRUE(Has(error_of([&] { partition_fabric(f, 2, "weighted"); }),
                  "partition strategy weighted balances a workload"));
}

TEST(PartitionFabric, ServersSpanningLeaves) {
  // Servers whose GPUs reach several leaves (gpus_per_server does not divide
  // radix/2), which the builders accept. Some leaves (in 3 tiers, pods) then hold
  // no server's first GPU. One rank must still work, with every atom on rank 0.
  for (const auto& spec : {fat_spec(2, 8, 32, 8),     // 8 leaves of 4 GPUs, 4 servers
                           fat_spec(2, 12, 8, 4),     // leaf 0: GPUs 0-5, leaf 1: GPUs 6-7
                           fat_spec(2, 4, 8, 8),      // 4 leaves of 2 GPUs, 1 server
                           fat_spec(3, 4, 16, 8)}) {  // 4 pods of 4 GPUs, 2 servers
    const Fabric f = build_fat_tree(spec);
    SCOPED_TRACE(f.description());
    try {
      const core::Partition p = partition_fabric(f, 1, "topology");
      for (core::AtomId a = 0; a < f.layout().atom_count(); ++a) {
        EXPECT_EQ(p.rank_of_atom(a), 0) << f.layout().atom_name(a);
      }
    } catch (const Error& e) {
      ADD_FAILURE() << "1 rank: " << e.what();
    }
  }
  // Two ranks over 8 leaves and 4 servers: every atom on a valid rank, and each
  // server with the leaf of its first GPU.
  const Fabric f = build_fat_tree(fat_spec(2, 8, 32, 8));
  try {
    const core::Partition p = partition_fabric(f, 2, "topology");
    for (core::AtomId a = 0; a < f.layout().atom_count(); ++a) {
      EXPECT_GE(p.rank_of_atom(a), 0) << f.layout().atom_name(a);
      EXPECT_LT(p.rank_of_atom(a), 2) << f.layout().atom_name(a);
    }
    for (std::uint32_t s = 0; s < f.server_count(); ++s) {
      EXPECT_EQ(p.rank_of_atom(s), p.rank_of_atom(atom_of(f, leaf_of(f, s * 8)))) << s;
    }
  } catch (const Error& e) {
    ADD_FAILURE() << "2 ranks: " << e.what();
  }
}

}  // namespace
}  // namespace shoal::topo
