// Rail-optimized fabrics: shape, routing on each plane, partition groups.
#include <gtest/gtest.h>

#include <set>

#include "shoal/core/error.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::topo {
namespace {

RailSpec rail(GpuId gpus, std::uint32_t radix, bool dual) {
  RailSpec s;
  s.base.gpus = gpus;
  s.base.gpus_per_server = 8;
  s.radix = radix;
  s.dual_plane = dual;
  return s;
}

std::uint32_t count_level(const Fabric& f, std::uint8_t level, std::uint16_t plane) {
  std::uint32_t n = 0;
  for (NodeId v = 0; v < f.node_count(); ++v) {
    n +=
        f.node(v).kind == NodeKind::kSwitch && f.node(v).level == level && f.node(v).plane == plane;
  }
  return n;
}

/// Follows ECMP from src's port on `plane` to dst; returns the hop count (-1 if lost).
int hops_on(const Fabric& f, LinkId port, GpuId dst, std::uint64_t hash) {
  NodeId at = f.link(port).to;
  int hops = 1;
  while (at != f.gpu_node(dst)) {
    if (hops > 8) return -1;
    at = f.link(f.ecmp_link(at, dst, hash)).to;
    ++hops;
  }
  return hops;
}

TEST(RailOptimized, ShapeSinglePlane) {
  // 128 GPUs, 8 per server: 16 servers, segments of 8 servers, 2 segments x 8 rails.
  const Fabric f = build_rail_optimized(rail(128, 16, false));
  EXPECT_EQ(f.plane_count(), 1u);
  EXPECT_EQ(count_level(f, 1, 0), 16u);
  EXPECT_EQ(count_level(f, 2, 0), 8u);
  // GPU i of a server is on rail switch i of its segment.
  for (GpuId g = 0; g < 128; ++g) {
    ASSERT_EQ(f.nic_links(g).size(), 1u);
    const Node& leaf = f.node(f.link(f.nic_links(g).front()).to);
    EXPECT_EQ(leaf.index, (g / 8) / 8 * 8 + g % 8);
    EXPECT_EQ(leaf.group, (g / 8) / 8);  // the segment
  }
}

TEST(RailOptimized, DualPlaneGivesEveryNicTwoPlanes) {
  const Fabric f = build_rail_optimized(rail(128, 16, true));
  EXPECT_EQ(f.plane_count(), 2u);
  EXPECT_EQ(count_level(f, 1, 1), 16u);
  EXPECT_EQ(count_level(f, 2, 1), 8u);
  for (GpuId g = 0; g < 128; ++g) {
    const auto ports = f.nic_links(g);
    ASSERT_EQ(ports.size(), 2u);
    EXPECT_EQ(f.node(f.link(ports[0]).to).plane, 0u);
    EXPECT_EQ(f.node(f.link(ports[1]).to).plane, 1u);
    EXPECT_TRUE(f.reachable_on(0, g));
    EXPECT_TRUE(f.reachable_on(1, g));
  }
}

TEST(RailOptimized, EveryPairRoutesOnEveryPlaneWithinFourHops) {
  const Fabric f = build_rail_optimized(rail(128, 16, true));
  for (GpuId a = 0; a < 128; ++a) {
    for (GpuId b = 0; b < 128; ++b) {
      if (a / 8 == b / 8) continue;
      for (const LinkId port : f.nic_links(a)) {
        const int hops = hops_on(f, port, b, a * 131 + b);
        // Same rail and segment: up to the rail switch and down; else via a spine.
        const bool same_rail = a % 8 == b % 8 && a / 64 == b / 64;
        ASSERT_EQ(hops, same_rail ? 2 : 4) << a << " -> " << b;
      }
    }
  }
}

TEST(RailOptimized, TooManyRailSwitchesForTheSpines) {
  try {
    build_rail_optimized(rail(256, 8, false));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("use a larger radix or fewer GPUs"), std::string::npos);
  }
}

TEST(RailOptimized, TopologyPartitionKeepsSegmentsTogether) {
  const Fabric f = build_rail_optimized(rail(128, 16, true));
  const core::Partition p = partition_fabric(f, 2, "topology");
  // Segment 0 (servers 0-7) and its rail switches on one rank, segment 1 on the other.
  for (std::uint32_t s = 0; s < 16; ++s) {
    EXPECT_EQ(p.rank_of_atom(s), static_cast<int>(s / 8)) << "server " << s;
  }
  EXPECT_EQ(core::lookahead(f.layout(), p), kMicrosecond);
}

}  // namespace
}  // namespace shoal::topo
