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

MultiPlaneSpec planes_spec(GpuId gpus, std::uint32_t planes, std::uint32_t radix) {
  MultiPlaneSpec s;
  s.base.gpus = gpus;
  s.base.gpus_per_server = 8;
  s.planes = planes;
  s.radix = radix;
  return s;
}

TEST(MultiPlane, GpuIOfAServerIsOnPlaneI) {
  const Fabric f = build_multi_plane(planes_spec(128, 8, 16));
  EXPECT_EQ(f.plane_count(), 8u);
  for (GpuId g = 0; g < 128; ++g) {
    ASSERT_EQ(f.nic_links(g).size(), 1u);
    EXPECT_EQ(f.node(f.link(f.nic_links(g).front()).to).plane, g % 8);
    for (std::uint32_t p = 0; p < 8; ++p) EXPECT_EQ(f.reachable_on(p, g), p == g % 8);
  }
  // Each plane: 16 NICs, leaves of 8: 2 leaves and 8 spines.
  std::uint32_t leaves = 0, spines = 0;
  for (NodeId v = 0; v < f.node_count(); ++v) {
    if (f.node(v).kind != NodeKind::kSwitch) continue;
    (f.node(v).level == 1 ? leaves : spines) += 1;
  }
  EXPECT_EQ(leaves, 16u);
  EXPECT_EQ(spines, 64u);
}

TEST(MultiPlane, CrossPlaneTrafficIsRelayedInTheSendersServer) {
  const Fabric f = build_multi_plane(planes_spec(128, 8, 16));
  // GPU 3 (plane 3) to GPU 21 (server 2, plane 5): relayed by GPU 5 of server 0.
  EXPECT_FALSE(f.shares_plane(3, 21));
  EXPECT_EQ(f.relay_for(3, 21), 5u);
  EXPECT_TRUE(f.shares_plane(5, 21));
  // Servers 0 and 2 share plane 5's leaf 0: NVLink to the relay (2 x 25 ns), then
  // up to the leaf and down (2 x 1 us).
  EXPECT_EQ(f.path_latency(3, 21), 2 * 25 * kNanosecond + 2 * kMicrosecond);
  EXPECT_EQ(f.path_latency(5, 21), 2 * kMicrosecond);
  // Server 9 sits on plane 5's leaf 1: leaf, spine, leaf (4 x 1 us).
  EXPECT_EQ(f.relay_for(3, 77), 5u);
  EXPECT_EQ(f.path_latency(3, 77), 2 * 25 * kNanosecond + 4 * kMicrosecond);
}

TEST(MultiPlane, PlanesMustDivideTheServer) {
  EXPECT_THROW(build_multi_plane(planes_spec(128, 3, 16)), Error);
}

}  // namespace
}  // namespace shoal::topo
