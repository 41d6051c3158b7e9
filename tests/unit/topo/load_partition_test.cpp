// The weighted partition (topo/load_partition.hpp): units placed so that each
// rank's load is balanced slice by slice, not only in total.
#include "shoal/topo/load_partition.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::topo {
namespace {

/// 128 GPUs in servers of 2 under 16 leaves of radix 16 (4 servers a leaf), 8 spines.
Fabric sixteen_leaves() {
  FatTreeSpec s;
  s.base.gpus = 128;
  s.base.gpus_per_server = 2;
  s.base.link_rate = 100'000'000'000;
  s.base.link_latency = kMicrosecond;
  s.base.nvlink_latency = 25 * kNanosecond;
  s.tiers = 2;
  s.radix = 16;
  return build_fat_tree(s);
}

/// Four "pipeline stages" of 32 GPUs (4 leaves each), stage s busy only in
/// slice s, as a job placed with its stages outermost is.
GpuLoad staged_load(const Fabric& f) {
  GpuLoad load{4, std::vector<std::uint64_t>(std::size_t{f.gpu_count()} * 4, 0)};
  for (GpuId g = 0; g < f.gpu_count(); ++g) load.load[std::size_t{g} * 4 + g / 32] = 100;
  return load;
}

NodeId leaf_of(const Fabric& f, GpuId g) { return f.link(f.nic_links(g).front()).to; }
int rank_of(const Fabric& f, const core::Partition& p, NodeId v) {
  return p.rank_of_atom(f.layout().atom_of(v));
}

/// Each rank's load in each slice: a GPU's load counts on its server's rank
/// and again on its leaf's, which carries its cells.
std::vector<std::vector<std::uint64_t>> rank_slices(const Fabric& f, const core::Partition& p,
                                                    const GpuLoad& load) {
  std::vector<std::vector<std::uint64_t>> out(static_cast<std::size_t>(p.ranks()),
                                              std::vector<std::uint64_t>(load.slices, 0));
  for (GpuId g = 0; g < f.gpu_count(); ++g) {
    for (const NodeId v : {f.gpu_node(g), leaf_of(f, g)}) {
      const auto r = static_cast<std::size_t>(rank_of(f, p, v));
      for (std::size_t s = 0; s < load.slices; ++s) out[r][s] += load.load[g * load.slices + s];
    }
  }
  return out;
}

TEST(WeightedPartition, BalancesEverySliceOfAStagedLoad) {
  const Fabric f = sixteen_leaves();
  const GpuLoad load = staged_load(f);
  for (const int ranks : {2, 4}) {
    SCOPED_TRACE(ranks);
    const core::Partition p = partition_by_load(f, ranks, load);
    EXPECT_EQ(p.description(), "weighted");
    // 32 GPUs of 100 per slice, counted at servers and at leaves: each rank
    // gets 6,400 / ranks of every slice.
    for (const auto& slices : rank_slices(f, p, load)) {
      for (const std::uint64_t s : slices) EXPECT_EQ(s, 6400u / static_cast<unsigned>(ranks));
    }
    // A leaf and its four servers share a rank, so that every flow's sender,
    // receiver and counting node (the receiver's leaf) are its GPUs' ranks.
    for (GpuId g = 0; g < f.gpu_count(); ++g) {
      EXPECT_EQ(rank_of(f, p, f.gpu_node(g)), rank_of(f, p, leaf_of(f, g))) << g;
    }
  }
  // The contrast: balanced by GPUs alone, two ranks split the stages two and
  // two, so in every slice one rank has all the load.
  const core::Partition topology = partition_fabric(f, 2, "topology");
  for (const auto& slices : rank_slices(f, topology, load)) {
    for (const std::uint64_t s : slices) EXPECT_TRUE(s == 0 || s == 6400) << s;
  }
}

TEST(WeightedPartition, KeepsTheUnitsInTurnWhereTheyBalanceAsWell) {
  // Each stage's four leaves dealt in turn give every rank an equal share of
  // every slice: the pilot's own partition, which the run then keeps.
  const Fabric f = sixteen_leaves();
  const GpuLoad load = staged_load(f);
  for (const int ranks : {2, 4}) {
    SCOPED_TRACE(ranks);
    const core::Partition turn = units_in_turn(f, ranks);
    EXPECT_EQ(turn.description(), "units in turn");
    const core::Partition p = partition_by_load(f, ranks, load);
    EXPECT_EQ(p.description(), "weighted");
    EXPECT_TRUE(p.places_as(turn));
  }
  // Every other leaf busy: dealt in turn, one rank of two would hold them all.
  GpuLoad alternate{1, std::vector<std::uint64_t>(f.gpu_count(), 0)};
  for (GpuId g = 0; g < f.gpu_count(); ++g) alternate.load[g] = (g / 8) % 2 == 0 ? 100 : 0;
  const core::Partition turn = units_in_turn(f, 2);
  const core::Partition p = partition_by_load(f, 2, alternate);
  EXPECT_FALSE(p.places_as(turn));
  EXPECT_EQ(rank_slices(f, turn, alternate)[1][0], 0u);
  for (const auto& slices : rank_slices(f, p, alternate)) EXPECT_EQ(slices[0], 6400u);
}

TEST(WeightedPartition, FewerLeavesThanRanksPlacesServersAndLeavesApart) {
  const Fabric f = sixteen_leaves();
  // 20 ranks, 16 leaves: units are the 64 servers and the 16 leaves. Stage s
  // (slice s) has 16 servers and 4 leaves, each leaf carrying its 4 servers'
  // load: every rank gets units, and no rank holds more of a slice than a
  // leaf's share plus a server's.
  const GpuLoad load = staged_load(f);
  const core::Partition p = partition_by_load(f, 20, load);
  const auto per_rank = p.entities_per_rank(f.layout());
  ASSERT_EQ(per_rank.size(), 20u);
  for (const auto n : per_rank) EXPECT_GT(n, 0);
  bool split = false;
  for (GpuId g = 0; g < f.gpu_count(); ++g) {
    split = split || rank_of(f, p, f.gpu_node(g)) != rank_of(f, p, leaf_of(f, g));
  }
  EXPECT_TRUE(split);
  for (const auto& slices : rank_slices(f, p, load)) {
    for (const std::uint64_t s : slices) EXPECT_LE(s, 800u + 200u) << s;
  }
}

TEST(WeightedPartition, KeepsEveryNicSwitchWithItsServersOnEveryFabric) {
  // Two segments of a dual-plane rail-optimized fabric; a multi-plane fat
  // tree (each server's GPUs on 8 planes' leaves); a 3-tier fat tree.
  RailSpec rail;
  rail.base.gpus = 128;
  rail.radix = 16;
  rail.dual_plane = true;
  MultiPlaneSpec planes;
  planes.base.gpus = 256;
  planes.radix = 8;
  FatTreeSpec three;
  three.base.gpus = 128;
  three.base.gpus_per_server = 4;
  three.tiers = 3;
  three.radix = 8;
  const Fabric fabrics[] = {build_rail_optimized(rail), build_multi_plane(planes),
                            build_fat_tree(three)};
  for (const Fabric& f : fabrics) {
    SCOPED_TRACE(f.description());
    GpuLoad load{1, std::vector<std::uint64_t>(f.gpu_count(), 1)};
    const core::Partition p = partition_by_load(f, 2, load);
    std::vector<int> gpus_of_rank(2, 0);
    for (GpuId g = 0; g < f.gpu_count(); ++g) {
      const int rank = rank_of(f, p, f.gpu_node(g));
      ++gpus_of_rank[static_cast<std::size_t>(rank)];
      for (const LinkId l : f.nic_links(g)) {
        const NodeId to = f.link(l).to;
        if (f.node(to).kind == NodeKind::kSwitch) {
          EXPECT_EQ(rank_of(f, p, to), rank) << g;
        }
      }
    }
    EXPECT_EQ(gpus_of_rank[0], gpus_of_rank[1]);
  }
}

TEST(WeightedPartition, WithoutLoadEveryRankGetsUnits) {
  const Fabric f = sixteen_leaves();
  const GpuLoad none{1, std::vector<std::uint64_t>(f.gpu_count(), 0)};
  const core::Partition p = partition_by_load(f, 5, none);
  const auto per_rank = p.entities_per_rank(f.layout());
  ASSERT_EQ(per_rank.size(), 5u);
  for (const auto n : per_rank) EXPECT_GT(n, 0);
}

TEST(WeightedPartition, UnevenTotalsGoToTheLightestRank) {
  const Fabric f = sixteen_leaves();
  // One slice; leaf l's GPUs weigh l + 1: 16 units whose totals differ.
  GpuLoad load{1, std::vector<std::uint64_t>(f.gpu_count(), 0)};
  for (GpuId g = 0; g < f.gpu_count(); ++g) load.load[g] = g / 8 + 1;
  const core::Partition p = partition_by_load(f, 2, load);
  const auto slices = rank_slices(f, p, load);
  // 2 x 8 x (1 + ... + 16) = 2,176 in all: largest first onto the lighter
  // rank ends within the smallest unit's weight (leaf 0 with its servers:
  // 2 x 8 x 1 = 16) of half.
  EXPECT_EQ(slices[0][0] + slices[1][0], 2176u);
  EXPECT_LE(slices[0][0] > slices[1][0] ? slices[0][0] - slices[1][0] : slices[1][0] - slices[0][0],
            16u);
}

TEST(WeightedPartition, RejectsALoadOfTheWrongShapeAndRanksWithoutServers) {
  const Fabric f = sixteen_leaves();
  EXPECT_THROW(partition_by_load(f, 2, GpuLoad{2, std::vector<std::uint64_t>(5, 0)}), Error);
  EXPECT_THROW(partition_by_load(f, 2, GpuLoad{0, {}}), Error);
  try {
    partition_by_load(f, 65, GpuLoad{1, std::vector<std::uint64_t>(f.gpu_count(), 1)});
    ADD_FAILURE() << "65 ranks from 64 servers";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "partition strategy weighted: 64 servers cannot fill 65 ranks; use fewer ranks");
  }
}

}  // namespace
}  // namespace shoal::topo
