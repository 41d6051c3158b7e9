// What the fabric builders' tests share: specs at fixed rates and latencies, a
// census of nodes and links, duplex checks, the fat-tree shapes counted by hand, and
// a walk along ECMP's choices.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::topo::fabric_test {

inline constexpr BitsPerSecond kRate = 100'000'000'000;  // 100 Gb/s
inline constexpr BitsPerSecond kNvRate = 3'600'000'000'000;
inline constexpr Time kLatency = kMicrosecond;
inline constexpr Time kNvLatency = 25 * kNanosecond;

inline FabricSpec base_spec(GpuId gpus, std::uint32_t per_server) {
  FabricSpec s;
  s.gpus = gpus;
  s.gpus_per_server = per_server;
  s.link_rate = kRate;
  s.link_latency = kLatency;
  s.nvlink_rate = kNvRate;
  s.nvlink_latency = kNvLatency;
  return s;
}

inline FatTreeSpec fat_spec(int tiers, std::uint32_t radix, GpuId gpus, std::uint32_t per_server,
                            std::uint32_t r_leaf = 1, std::uint32_t r_agg = 1) {
  FatTreeSpec s;
  s.base = base_spec(gpus, per_server);
  s.tiers = tiers;
  s.radix = radix;
  s.leaf_oversubscription = r_leaf;
  s.aggregation_oversubscription = r_agg;
  return s;
}

/// What a fabric holds, counted from its nodes and links.
struct Census {
  std::uint32_t gpus = 0;
  std::uint32_t nvswitches = 0;
  std::array<std::uint32_t, 4> switches{};             // by level
  std::map<Tier, std::uint32_t> up_links, down_links;  // directed, by tier
};

inline Census census(const Fabric& f) {
  Census c;
  for (NodeId v = 0; v < f.node_count(); ++v) {
    const Node& n = f.node(v);
    if (n.kind == NodeKind::kGpu) ++c.gpus;
    if (n.kind == NodeKind::kNvSwitch) ++c.nvswitches;
    if (n.kind == NodeKind::kSwitch) ++c.switches.at(n.level);
  }
  for (LinkId l = 0; l < f.link_count(); ++l) {
    const Link& link = f.link(l);
    ++(link.up ? c.up_links : c.down_links)[link.tier];
  }
  return c;
}

/// The first switch's node id: every server's GPUs and NVSwitch come before.
inline NodeId first_switch(const Fabric& f) { return f.gpu_count() + f.server_count(); }

/// Every link has its reverse, with the same rate, latency and tier, the other
/// direction and the ends swapped; GPU and NVSwitch links are NVLink or host links.
inline void expect_duplex(const Fabric& f) {
  for (LinkId l = 0; l < f.link_count(); ++l) {
    const Link& a = f.link(l);
    ASSERT_LT(a.reverse, f.link_count()) << l;
    const Link& b = f.link(a.reverse);
    EXPECT_EQ(b.reverse, l) << l;
    EXPECT_EQ(a.from, b.to) << l;
    EXPECT_EQ(a.to, b.from) << l;
    EXPECT_NE(a.up, b.up) << l;
    EXPECT_EQ(a.rate, b.rate) << l;
    EXPECT_EQ(a.latency, b.latency) << l;
    EXPECT_EQ(a.tier, b.tier) << l;
    if (a.tier == Tier::kNvlink) {
      EXPECT_EQ(a.rate, kNvRate) << l;
      EXPECT_EQ(a.latency, kNvLatency) << l;
    } else {
      EXPECT_EQ(a.rate, kRate) << l;
      EXPECT_EQ(a.latency, kLatency) << l;
    }
    // The upward end is one level higher (GPU 0 -> NVSwitch 0 for NVLink).
    const Link& up = a.up ? a : b;
    const Node& lo = f.node(up.from);
    const Node& hi = f.node(up.to);
    if (a.tier == Tier::kNvlink) {
      EXPECT_EQ(lo.kind, NodeKind::kGpu) << l;
      EXPECT_EQ(hi.kind, NodeKind::kNvSwitch) << l;
    } else {
      EXPECT_EQ(hi.kind, NodeKind::kSwitch) << l;
      EXPECT_EQ(hi.level, static_cast<int>(a.tier)) << l;
      if (a.tier == Tier::kHost) {
        EXPECT_EQ(lo.kind, NodeKind::kGpu) << l;
      } else {
        EXPECT_EQ(lo.kind, NodeKind::kSwitch) << l;
        EXPECT_EQ(lo.level + 1, hi.level) << l;
      }
    }
  }
  // out_links(n) are exactly the links from n.
  std::size_t total = 0;
  for (NodeId v = 0; v < f.node_count(); ++v) {
    for (const LinkId l : f.out_links(v)) EXPECT_EQ(f.link(l).from, v) << l;
    total += f.out_links(v).size();
  }
  EXPECT_EQ(total, f.link_count());
}

/// The expected shape of a fat tree, hand-computed: switches per level and duplex
/// links per tier.
struct Shape {
  int tiers;
  std::uint32_t radix;
  GpuId gpus;
  std::uint32_t per_server;
  std::uint32_t r_leaf, r_agg;
  std::uint32_t leaves, level2, cores;
  std::uint32_t spine_links, core_links;  // duplex, leaf-spine and spine-core
};

inline constexpr Shape kShapes[] = {
    // tiers radix gpus per_server r_leaf r_agg | leaves level2 cores | spine core
    {2, 4, 8, 1, 1, 1, 4, 2, 0, 8, 0},  // full: k^2/2 = 8 hosts, 3k/2 = 6 switches
    {2, 4, 8, 8, 1, 1, 4, 2, 0, 8, 0},
    {2, 8, 32, 1, 1, 1, 8, 4, 0, 32, 0},  // full: 32 hosts
    {2, 8, 32, 8, 1, 1, 8, 4, 0, 32, 0},
    {2, 8, 6, 1, 1, 1, 2, 4, 0, 8, 0},        // a partial leaf
    {2, 16, 128, 1, 1, 1, 16, 8, 0, 128, 0},  // full: 128 hosts
    {2, 16, 128, 8, 1, 1, 16, 8, 0, 128, 0},
    {2, 16, 40, 8, 1, 1, 5, 8, 0, 40, 0},
    {2, 16, 128, 8, 4, 1, 16, 2, 0, 32, 0},  // 4:1 leaves: 2 spines
    {2, 16, 128, 8, 8, 1, 16, 1, 0, 16, 0},  // 8:1 leaves: 1 spine
    {3, 4, 16, 1, 1, 1, 8, 8, 4, 16, 16},    // full: k^3/4 = 16 hosts, 5k^2/4 = 20 switches
    {3, 4, 16, 8, 1, 1, 8, 8, 4, 16, 16},
    {3, 8, 128, 1, 1, 1, 32, 32, 16, 128, 128},  // full: 128 hosts, 80 switches
    {3, 8, 128, 8, 1, 1, 32, 32, 16, 128, 128},
    {3, 8, 40, 8, 1, 1, 10, 12, 16, 40, 48},   // 3 pods, the last one partial
    {3, 8, 128, 8, 1, 2, 32, 32, 8, 128, 64},  // 2:1 aggregation: 2 core links each
    {3, 8, 128, 8, 2, 2, 32, 16, 4, 64, 32},   // 2:1 at both levels
    {3, 16, 256, 8, 1, 1, 32, 32, 64, 256, 256},
    {3, 16, 1024, 8, 1, 1, 128, 128, 64, 1024, 1024},  // full: 1024 hosts, 320 switches
};

inline std::string shape_name(const Shape& s) {
  return std::to_string(s.tiers) + "-tier k=" + std::to_string(s.radix) +
         " gpus=" + std::to_string(s.gpus) + " per_server=" + std::to_string(s.per_server) +
         " r=" + std::to_string(s.r_leaf) + "/" + std::to_string(s.r_agg);
}

inline Fabric build(const Shape& s) {
  return build_fat_tree(fat_spec(s.tiers, s.radix, s.gpus, s.per_server, s.r_leaf, s.r_agg));
}

/// Follows ecmp_link from src's NIC to dst: the hops taken, or a failure that
/// says where it went wrong (a link not at the current node, an up link after a
/// down link, or more hops than any up/down path has).
inline ::testing::AssertionResult walk(const Fabric& f, GpuId src, GpuId dst, std::uint64_t hash,
                                       int& hops, Time& latency) {
  LinkId l = f.nic_links(src).front();
  NodeId at = f.link(l).to;
  hops = 1;
  latency = f.link(l).latency;
  bool down = false;
  while (at != f.gpu_node(dst)) {
    if (f.node(at).kind != NodeKind::kSwitch) {
      return ::testing::AssertionFailure() << "reached non-switch node " << at;
    }
    if (hops > 8) return ::testing::AssertionFailure() << "loop: more than 8 hops";
    l = f.ecmp_link(at, dst, hash);
    const Link& link = f.link(l);
    if (link.from != at) return ::testing::AssertionFailure() << "link " << l << " not at " << at;
    if (link.up && down) return ::testing::AssertionFailure() << "up after down at " << at;
    down = down || !link.up;
    latency += link.latency;
    at = link.to;
    ++hops;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace shoal::topo::fabric_test
