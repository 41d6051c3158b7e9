// The fabric graph and its builders: sizes against the closed forms, node-id
// layout, engine atoms, up/down routing with ECMP, path latency, oversubscription
// and the errors that name an impossible setting.
#include "shoal/topo/fabric.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "error_checks.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::topo {
namespace {

using shoal::test::error_of;
using shoal::test::Has;

constexpr BitsPerSecond kRate = 100'000'000'000;  // 100 Gb/s
constexpr BitsPerSecond kNvRate = 3'600'000'000'000;
constexpr Time kLatency = kMicrosecond;
constexpr Time kNvLatency = 25 * kNanosecond;

FabricSpec base_spec(GpuId gpus, std::uint32_t per_server) {
  FabricSpec s;
  s.gpus = gpus;
  s.gpus_per_server = per_server;
  s.link_rate = kRate;
  s.link_latency = kLatency;
  s.nvlink_rate = kNvRate;
  s.nvlink_latency = kNvLatency;
  return s;
}

FatTreeSpec fat_spec(int tiers, std::uint32_t radix, GpuId gpus, std::uint32_t per_server,
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

Census census(const Fabric& f) {
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

std::uint32_t switch_count(const Fabric& f) {
  std::uint32_t n = 0;
  for (NodeId v = 0; v < f.node_count(); ++v) n += f.node(v).kind == NodeKind::kSwitch;
  return n;
}

/// The first switch's node id: every server's GPUs and NVSwitch come before.
NodeId first_switch(const Fabric& f) { return f.gpu_count() + f.server_count(); }

/// Every link has its reverse, with the same rate, latency and tier, the other
/// direction and the ends swapped; GPU and NVSwitch links are NVLink or host links.
void expect_duplex(const Fabric& f) {
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

const Shape kShapes[] = {
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

std::string shape_name(const Shape& s) {
  return std::to_string(s.tiers) + "-tier k=" + std::to_string(s.radix) +
         " gpus=" + std::to_string(s.gpus) + " per_server=" + std::to_string(s.per_server) +
         " r=" + std::to_string(s.r_leaf) + "/" + std::to_string(s.r_agg);
}

Fabric build(const Shape& s) {
  return build_fat_tree(fat_spec(s.tiers, s.radix, s.gpus, s.per_server, s.r_leaf, s.r_agg));
}

// --- single switch ---

TEST(SingleSwitch, Shape) {
  const Fabric f = build_single_switch(base_spec(16, 8));
  EXPECT_EQ(f.kind(), "single-switch");
  EXPECT_EQ(f.description(), "gpus=16 per_server=8");
  EXPECT_EQ(f.gpu_count(), 16u);
  EXPECT_EQ(f.gpus_per_server(), 8u);
  EXPECT_EQ(f.server_count(), 2u);
  EXPECT_EQ(f.node_count(), 16u + 2u + 1u);
  EXPECT_EQ(f.link_count(), 2u * (16u + 16u));
  const Census c = census(f);
  EXPECT_EQ(c.gpus, 16u);
  EXPECT_EQ(c.nvswitches, 2u);
  EXPECT_EQ(c.switches[1], 1u);
  EXPECT_EQ(c.switches[2], 0u);
  EXPECT_EQ(c.switches[3], 0u);
  EXPECT_EQ(c.up_links.at(Tier::kNvlink), 16u);
  EXPECT_EQ(c.down_links.at(Tier::kNvlink), 16u);
  EXPECT_EQ(c.up_links.at(Tier::kHost), 16u);
  EXPECT_EQ(c.down_links.at(Tier::kHost), 16u);
  EXPECT_EQ(c.up_links.count(Tier::kSpine), 0u);
  expect_duplex(f);
  const NodeId sw = 18;
  EXPECT_EQ(f.node(sw).kind, NodeKind::kSwitch);
  EXPECT_EQ(f.node(sw).level, 1);
  EXPECT_EQ(f.node(sw).index, 0u);
  EXPECT_EQ(f.out_links(sw).size(), 16u);
  for (GpuId g = 0; g < 16; ++g) {
    ASSERT_EQ(f.nic_links(g).size(), 1u);
    const Link& nic = f.link(f.nic_links(g).front());
    EXPECT_EQ(nic.from, f.gpu_node(g));
    EXPECT_EQ(nic.to, sw);
    EXPECT_TRUE(nic.up);
    EXPECT_EQ(nic.tier, Tier::kHost);
  }
}

TEST(SingleSwitch, RoutesAndLatencies) {
  const Fabric f = build_single_switch(base_spec(12, 4));
  const NodeId sw = first_switch(f);
  for (GpuId src = 0; src < 12; ++src) {
    for (GpuId dst = 0; dst < 12; ++dst) {
      const auto next = f.next_links(sw, dst);
      ASSERT_EQ(next.size(), 1u);
      EXPECT_EQ(f.link(next.front()).to, f.gpu_node(dst));
      EXPECT_EQ(f.ecmp_link(sw, dst, src * 977u), next.front());
      const Time expected = src / 4 == dst / 4 ? 2 * kNvLatency : 2 * kLatency;
      EXPECT_EQ(f.path_latency(src, dst), expected) << src << " -> " << dst;
    }
  }
}

TEST(SingleSwitch, OneGpuPerServer) {
  const Fabric f = build_single_switch(base_spec(5, 1));
  EXPECT_EQ(f.server_count(), 5u);
  EXPECT_EQ(f.node_count(), 5u + 5u + 1u);
  for (GpuId g = 0; g < 5; ++g) {
    EXPECT_EQ(f.gpu_node(g), 2 * g);
    EXPECT_EQ(f.nvswitch_node(g), 2 * g + 1);
  }
  EXPECT_EQ(f.path_latency(0, 0), 2 * kNvLatency);
  EXPECT_EQ(f.path_latency(0, 4), 2 * kLatency);
}

TEST(SingleSwitch, Errors) {
  EXPECT_TRUE(Has(error_of([] { build_single_switch(base_spec(12, 8)); }),
                  "gpus (12) must be a positive multiple of gpus_per_server (8)"));
  EXPECT_TRUE(Has(error_of([] { build_single_switch(base_spec(0, 8)); }),
                  "gpus (0) must be a positive multiple"));
  EXPECT_TRUE(Has(error_of([] { build_single_switch(base_spec(8, 0)); }),
                  "gpus_per_server must be at least 1"));
}

// --- fat tree: sizes ---

TEST(FatTree, ShapesMatchHandCounts) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(shape_name(s));
    const Fabric f = build(s);
    EXPECT_EQ(f.kind(), "fat-tree");
    EXPECT_EQ(f.gpu_count(), s.gpus);
    EXPECT_EQ(f.server_count(), s.gpus / s.per_server);
    const Census c = census(f);
    EXPECT_EQ(c.gpus, s.gpus);
    EXPECT_EQ(c.nvswitches, s.gpus / s.per_server);
    EXPECT_EQ(c.switches[0], 0u);
    EXPECT_EQ(c.switches[1], s.leaves);
    EXPECT_EQ(c.switches[2], s.level2);
    EXPECT_EQ(c.switches[3], s.cores);
    EXPECT_EQ(f.node_count(), s.gpus + s.gpus / s.per_server + s.leaves + s.level2 + s.cores);
    // Duplex: one up and one down link per connection.
    for (const auto* links : {&c.up_links, &c.down_links}) {
      EXPECT_EQ(links->at(Tier::kNvlink), s.gpus);
      EXPECT_EQ(links->at(Tier::kHost), s.gpus);
      EXPECT_EQ(links->at(Tier::kSpine), s.spine_links);
      EXPECT_EQ(links->count(Tier::kCore) ? links->at(Tier::kCore) : 0u, s.core_links);
    }
    EXPECT_EQ(f.link_count(), 2u * (s.gpus + s.gpus + s.spine_links + s.core_links));
    expect_duplex(f);
  }
}

TEST(FatTree, ClosedFormsAtFullSize) {
  // A k-ary 3-tier fat tree: k^3/4 hosts, 5k^2/4 switches.
  for (const std::uint32_t k : {4u, 8u, 16u}) {
    SCOPED_TRACE(k);
    const Fabric f = build_fat_tree(fat_spec(3, k, k * k * k / 4, 1));
    EXPECT_EQ(f.gpu_count(), k * k * k / 4);
    EXPECT_EQ(switch_count(f), 5 * k * k / 4);
    const Census c = census(f);
    EXPECT_EQ(c.switches[1], k * k / 2);  // k pods of k/2 leaves
    EXPECT_EQ(c.switches[2], k * k / 2);  // k pods of k/2 aggregation switches
    EXPECT_EQ(c.switches[3], k * k / 4);
    // Every port is used: leaves and aggregation switches k/2 down and k/2 up,
    // cores one down to each of the k pods.
    for (NodeId v = first_switch(f); v < f.node_count(); ++v) {
      EXPECT_EQ(f.out_links(v).size(), k) << v;
    }
    // One more GPU needs a (k+1)-th pod.
    EXPECT_TRUE(Has(error_of([&] { build_fat_tree(fat_spec(3, k, k * k * k / 4 + 1, 1)); }),
                    "holds at most " + std::to_string(k * k * k / 4) + " GPUs"));
  }
  {
    const Fabric f = build_fat_tree(fat_spec(3, 8, 128, 1));
    EXPECT_EQ(f.gpu_count(), 128u);
    EXPECT_EQ(switch_count(f), 80u);
  }
  // A non-blocking 2-tier leaf-spine of radix-k switches: k^2/2 hosts.
  for (const std::uint32_t k : {4u, 8u, 16u, 64u}) {
    SCOPED_TRACE(k);
    const Fabric f = build_fat_tree(fat_spec(2, k, k * k / 2, 1));
    EXPECT_EQ(f.gpu_count(), k * k / 2);
    EXPECT_EQ(switch_count(f), k + k / 2);
    // Leaves: k/2 hosts and k/2 spines; spines: k leaves.
    for (NodeId v = first_switch(f); v < f.node_count(); ++v) {
      EXPECT_EQ(f.out_links(v).size(), k) << v;
    }
  }
}

TEST(FatTree, TwoTierRadix64HoldsExactly2048) {
  const Fabric f = build_fat_tree(fat_spec(2, 64, 2048, 1));
  EXPECT_EQ(f.gpu_count(), 2048u);
  const Census c = census(f);
  EXPECT_EQ(c.switches[1], 64u);
  EXPECT_EQ(c.switches[2], 32u);
  EXPECT_EQ(c.up_links.at(Tier::kSpine), 64u * 32u);
  const Fabric f8 = build_fat_tree(fat_spec(2, 64, 2048, 8));
  EXPECT_EQ(f8.server_count(), 256u);
  EXPECT_EQ(switch_count(f8), 96u);
  const std::string e = error_of([] { build_fat_tree(fat_spec(2, 64, 2049, 1)); });
  EXPECT_TRUE(Has(e, "holds at most 2048 GPUs"));
  EXPECT_TRUE(Has(e, "65 leaves"));
  EXPECT_TRUE(Has(e, "tiers = 3"));
}

TEST(FatTree, ThreeTierRadix64Holds65536) {
  const Fabric f = build_fat_tree(fat_spec(3, 64, 65536, 1));
  EXPECT_EQ(f.gpu_count(), 65536u);
  EXPECT_EQ(switch_count(f), 5u * 64u * 64u / 4u);
  const Census c = census(f);
  EXPECT_EQ(c.switches[1], 2048u);
  EXPECT_EQ(c.switches[2], 2048u);
  EXPECT_EQ(c.switches[3], 1024u);
  EXPECT_EQ(c.up_links.at(Tier::kSpine), 65536u);
  EXPECT_EQ(c.up_links.at(Tier::kCore), 65536u);
  EXPECT_TRUE(
      Has(error_of([] { build_fat_tree(fat_spec(3, 64, 65537, 1)); }), "holds at most 65536 GPUs"));
}

TEST(FatTree, Description) {
  EXPECT_EQ(build_fat_tree(fat_spec(2, 8, 32, 8)).description(),
            "2-tier radix=8 gpus=32 per_server=8 leaf=1:1");
  EXPECT_EQ(build_fat_tree(fat_spec(3, 8, 128, 8, 2, 4)).description(),
            "3-tier radix=8 gpus=128 per_server=8 leaf=2:1 aggregation=4:1");
}

// --- node ids and the engine layout ---

TEST(FabricLayout, NodeIdsAreServersThenSwitches) {
  const Fabric f = build_fat_tree(fat_spec(2, 8, 32, 8));
  // Server s: GPUs at 9s .. 9s+7, its NVSwitch at 9s+8.
  EXPECT_EQ(f.gpu_node(0), 0u);
  EXPECT_EQ(f.gpu_node(7), 7u);
  EXPECT_EQ(f.nvswitch_node(0), 8u);
  EXPECT_EQ(f.gpu_node(8), 9u);
  EXPECT_EQ(f.gpu_node(15), 16u);
  EXPECT_EQ(f.nvswitch_node(1), 17u);
  EXPECT_EQ(f.gpu_node(31), 34u);
  EXPECT_EQ(f.nvswitch_node(3), 35u);
  for (GpuId g = 0; g < 32; ++g) {
    const Node& n = f.node(f.gpu_node(g));
    EXPECT_EQ(n.kind, NodeKind::kGpu) << g;
    EXPECT_EQ(n.level, 0) << g;
    EXPECT_EQ(n.group, g / 8) << g;
    EXPECT_EQ(n.index, g) << g;
    // NVLink first, then the NIC.
    const auto out = f.out_links(f.gpu_node(g));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(f.link(out[0]).tier, Tier::kNvlink);
    EXPECT_EQ(f.link(out[0]).to, f.nvswitch_node(g / 8));
    EXPECT_EQ(f.nic_links(g).size(), 1u);
    EXPECT_EQ(f.nic_links(g).front(), out[1]);
    EXPECT_EQ(f.link(out[1]).to, first_switch(f) + g / 4) << g;  // leaf g / (k/2)
  }
  for (std::uint32_t s = 0; s < 4; ++s) {
    const Node& n = f.node(f.nvswitch_node(s));
    EXPECT_EQ(n.kind, NodeKind::kNvSwitch);
    EXPECT_EQ(n.group, s);
    // Its NVLinks down to its GPUs, in order.
    const auto out = f.out_links(f.nvswitch_node(s));
    ASSERT_EQ(out.size(), 8u);
    for (std::uint32_t i = 0; i < 8; ++i) EXPECT_EQ(f.link(out[i]).to, f.gpu_node(s * 8 + i));
  }
  // Leaves 36..43, spines 44..47.
  EXPECT_EQ(first_switch(f), 36u);
  EXPECT_EQ(f.node_count(), 48u);
  for (NodeId v = 36; v < 48; ++v) {
    const Node& n = f.node(v);
    EXPECT_EQ(n.kind, NodeKind::kSwitch);
    EXPECT_EQ(n.level, v < 44 ? 1 : 2);
    EXPECT_EQ(n.index, v < 44 ? v - 36 : v - 44);
    // A 2-tier leaf is its own partition group; spines have none.
    EXPECT_EQ(n.group, v < 44 ? v - 36 : 0u);
  }
}

TEST(FabricLayout, ThreeTierSwitchGroups) {
  const Fabric f = build_fat_tree(fat_spec(3, 4, 16, 1));  // 8 leaves, 8 aggs, 4 cores
  const NodeId s0 = first_switch(f);
  EXPECT_EQ(s0, 32u);
  for (std::uint32_t l = 0; l < 8; ++l) {
    EXPECT_EQ(f.node(s0 + l).level, 1);
    EXPECT_EQ(f.node(s0 + l).index, l);
    EXPECT_EQ(f.node(s0 + l).group, l / 2);  // pod
  }
  for (std::uint32_t a = 0; a < 8; ++a) {
    EXPECT_EQ(f.node(s0 + 8 + a).level, 2);
    EXPECT_EQ(f.node(s0 + 8 + a).index, a);
    EXPECT_EQ(f.node(s0 + 8 + a).group, a / 2);
  }
  for (std::uint32_t c = 0; c < 4; ++c) {
    EXPECT_EQ(f.node(s0 + 16 + c).level, 3);
    EXPECT_EQ(f.node(s0 + 16 + c).index, c);
    // A core reaches one aggregation switch in each of the 4 pods.
    const auto out = f.out_links(s0 + 16 + c);
    ASSERT_EQ(out.size(), 4u);
    std::set<std::uint32_t> pods;
    for (const LinkId l : out) {
      EXPECT_FALSE(f.link(l).up);
      EXPECT_EQ(f.link(l).tier, Tier::kCore);
      pods.insert(f.node(f.link(l).to).group);
    }
    EXPECT_EQ(pods.size(), 4u);
  }
  // Leaves reach only the aggregation switches of their pod.
  for (std::uint32_t l = 0; l < 8; ++l) {
    for (const LinkId id : f.out_links(s0 + l)) {
      const Link& link = f.link(id);
      if (!link.up) continue;
      EXPECT_EQ(f.node(link.to).level, 2);
      EXPECT_EQ(f.node(link.to).group, l / 2);
    }
  }
}

TEST(FabricLayout, OneAtomPerServerThenPerSwitch) {
  for (const std::uint32_t per_server : {1u, 8u}) {
    SCOPED_TRACE(per_server);
    const Fabric f = build_fat_tree(fat_spec(3, 8, 128, per_server));
    const core::Layout& layout = f.layout();
    const std::uint32_t servers = 128 / per_server;
    const std::uint32_t switches = 80;
    EXPECT_EQ(layout.entity_count(), f.node_count());
    ASSERT_EQ(layout.atom_count(), servers + switches);
    EXPECT_EQ(layout.topology(), "fat-tree " + f.description());
    for (std::uint32_t s = 0; s < servers; ++s) {
      EXPECT_EQ(layout.atom_begin(s), s * (per_server + 1));
      EXPECT_EQ(layout.atom_end(s), (s + 1) * (per_server + 1));
      EXPECT_EQ(layout.atom_name(s), "server " + std::to_string(s));
      EXPECT_EQ(layout.atom_of(f.nvswitch_node(s)), s);
      for (std::uint32_t i = 0; i < per_server; ++i) {
        EXPECT_EQ(layout.atom_of(f.gpu_node(s * per_server + i)), s);
      }
    }
    for (std::uint32_t i = 0; i < switches; ++i) {
      const core::AtomId a = servers + i;
      const NodeId v = first_switch(f) + i;
      EXPECT_EQ(layout.atom_begin(a), v);
      EXPECT_EQ(layout.atom_end(a), v + 1);
      const std::string level = i < 32 ? "leaf" : i < 64 ? "spine" : "core";
      EXPECT_EQ(layout.atom_name(a), level + " " + std::to_string(f.node(v).index));
    }
    // Every network link crosses atoms; NVLinks never do.
    EXPECT_EQ(layout.links().size(), f.link_count() - 2u * 128u);
    for (const core::AtomLink& l : layout.links()) {
      EXPECT_NE(l.from, l.to);
      EXPECT_EQ(l.latency, kLatency);
    }
  }
}

TEST(FabricLayout, FingerprintDependsOnShape) {
  const auto a = build_fat_tree(fat_spec(2, 8, 32, 8)).layout().fingerprint();
  EXPECT_EQ(a, build_fat_tree(fat_spec(2, 8, 32, 8)).layout().fingerprint());
  EXPECT_NE(a, build_fat_tree(fat_spec(2, 8, 32, 4)).layout().fingerprint());
  EXPECT_NE(a, build_fat_tree(fat_spec(2, 8, 32, 8, 2)).layout().fingerprint());
}

// --- routing ---

std::uint32_t leaf_of(const Shape& s, GpuId g) { return g / (s.radix / 2); }

int expected_hops(const Shape& s, GpuId src, GpuId dst) {
  const std::uint32_t a = leaf_of(s, src), b = leaf_of(s, dst);
  if (a == b) return 2;
  if (s.tiers == 2 || a / (s.radix / 2) == b / (s.radix / 2)) return 4;
  return 6;
}

/// Follows ecmp_link from src's NIC to dst: the hops taken, or a failure that
/// says where it went wrong (a link not at the current node, an up link after a
/// down link, or more hops than any up/down path has).
::testing::AssertionResult walk(const Fabric& f, GpuId src, GpuId dst, std::uint64_t hash,
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

TEST(Routing, EveryPairReachableWithUpDownHopCounts) {
  for (const Shape& s : kShapes) {
    if (s.gpus > 128) continue;  // exhaustive below
    SCOPED_TRACE(shape_name(s));
    const Fabric f = build(s);
    for (GpuId src = 0; src < s.gpus; ++src) {
      for (GpuId dst = 0; dst < s.gpus; ++dst) {
        if (src / s.per_server == dst / s.per_server) continue;
        for (const std::uint64_t hash : {0ull, 1ull, 0x9e3779b97f4a7c15ull}) {
          int hops = 0;
          Time latency = 0;
          ASSERT_TRUE(walk(f, src, dst, hash, hops, latency)) << src << " -> " << dst;
          ASSERT_EQ(hops, expected_hops(s, src, dst)) << src << " -> " << dst;
          ASSERT_EQ(latency, hops * kLatency);
        }
      }
    }
  }
}

TEST(Routing, LargeThreeTierSampled) {
  const Shape s{3, 16, 1024, 8, 1, 1, 128, 128, 64, 1024, 1024};
  const Fabric f = build(s);
  std::map<int, int> by_hops;
  for (GpuId src = 0; src < 1024; src += 37) {
    for (GpuId dst = 0; dst < 1024; ++dst) {
      if (src / 8 == dst / 8) continue;
      int hops = 0;
      Time latency = 0;
      ASSERT_TRUE(walk(f, src, dst, src * 1315423911ull + dst, hops, latency))
          << src << "->" << dst;
      ASSERT_EQ(hops, expected_hops(s, src, dst)) << src << " -> " << dst;
      ++by_hops[hops];
    }
  }
  // A server is a leaf here (8 hosts per leaf), so no 2-hop pairs between servers.
  EXPECT_EQ(by_hops.count(2), 0u);
  EXPECT_GT(by_hops[4], 0);
  EXPECT_GT(by_hops[6], 0);
}

TEST(Routing, PathLatencyIsHopsTimesLinkLatency) {
  for (const Shape& s : kShapes) {
    if (s.gpus > 128) continue;
    SCOPED_TRACE(shape_name(s));
    const Fabric f = build(s);
    for (GpuId src = 0; src < s.gpus; ++src) {
      for (GpuId dst = 0; dst < s.gpus; ++dst) {
        const Time expected = src / s.per_server == dst / s.per_server
                                  ? 2 * kNvLatency
                                  : expected_hops(s, src, dst) * kLatency;
        ASSERT_EQ(f.path_latency(src, dst), expected) << src << " -> " << dst;
      }
    }
  }
}

TEST(Routing, PathLatencyWithOtherLatencies) {
  FatTreeSpec spec = fat_spec(3, 4, 16, 2);
  spec.base.link_latency = 700 * kNanosecond;
  spec.base.nvlink_latency = 3 * kNanosecond;
  const Fabric f = build_fat_tree(spec);
  EXPECT_EQ(f.path_latency(0, 1), 6 * kNanosecond);         // one server
  EXPECT_EQ(f.path_latency(0, 2), 4 * 700 * kNanosecond);   // same pod, other leaf
  EXPECT_EQ(f.path_latency(0, 15), 6 * 700 * kNanosecond);  // other pod
  EXPECT_EQ(f.path_latency(15, 0), 6 * 700 * kNanosecond);
}

/// Leaf nodes below switch v (v itself when it is a leaf), found by following down links.
std::set<NodeId> leaves_below(const Fabric& f, NodeId v) {
  std::set<NodeId> out;
  if (f.node(v).kind != NodeKind::kSwitch) return out;
  if (f.node(v).level == 1) return {v};
  for (const LinkId l : f.out_links(v)) {
    if (f.link(l).up) continue;
    const auto below = leaves_below(f, f.link(l).to);
    out.insert(below.begin(), below.end());
  }
  return out;
}

TEST(Routing, NextLinksAreUpLinksOrExactlyTheDownLinks) {
  for (const Shape& s : kShapes) {
    if (s.gpus > 128) continue;
    SCOPED_TRACE(shape_name(s));
    const Fabric f = build(s);
    for (NodeId v = first_switch(f); v < f.node_count(); ++v) {
      std::vector<LinkId> ups;
      for (const LinkId l : f.out_links(v)) {
        if (f.link(l).up) ups.push_back(l);
      }
      const auto below = leaves_below(f, v);
      for (GpuId dst = 0; dst < s.gpus; ++dst) {
        const NodeId dst_leaf = f.link(f.nic_links(dst).front()).to;
        std::vector<LinkId> expected;
        if (v == dst_leaf) {
          for (const LinkId l : f.out_links(v)) {
            if (f.link(l).to == f.gpu_node(dst)) expected.push_back(l);
          }
          ASSERT_EQ(expected.size(), 1u);
        } else if (below.contains(dst_leaf)) {
          for (const LinkId l : f.out_links(v)) {
            if (!f.link(l).up && leaves_below(f, f.link(l).to).contains(dst_leaf)) {
              expected.push_back(l);
            }
          }
          ASSERT_FALSE(expected.empty());
        } else {
          expected = ups;
        }
        const auto got_span = f.next_links(v, dst);
        std::vector<LinkId> got(got_span.begin(), got_span.end());
        std::sort(got.begin(), got.end());
        std::sort(expected.begin(), expected.end());
        ASSERT_EQ(got, expected) << "at node " << v << " (level " << int{f.node(v).level}
                                 << ") towards GPU " << dst;
      }
    }
  }
}

TEST(Routing, UpLinkCountsPerLevel) {
  // radix 8, 2:1 leaves: 2 up links per leaf; 4:1 aggregation: 1 per aggregation switch.
  const Fabric f = build_fat_tree(fat_spec(3, 8, 128, 1, 2, 4));
  const NodeId leaf0 = first_switch(f);
  EXPECT_EQ(f.next_links(leaf0, 127).size(), 2u);  // other pod: up
  EXPECT_EQ(f.next_links(leaf0, 4).size(), 2u);    // same pod, other leaf: up
  EXPECT_EQ(f.next_links(leaf0, 3).size(), 1u);    // below
  const NodeId agg0 = leaf0 + 32;
  EXPECT_EQ(f.node(agg0).level, 2);
  EXPECT_EQ(f.next_links(agg0, 127).size(), 1u);  // up to its one core
  EXPECT_TRUE(f.link(f.next_links(agg0, 127).front()).up);
  EXPECT_EQ(f.next_links(agg0, 4).size(), 1u);  // down to leaf 1
  EXPECT_FALSE(f.link(f.next_links(agg0, 4).front()).up);
  EXPECT_EQ(f.link(f.next_links(agg0, 4).front()).to, leaf0 + 1);
}

TEST(Routing, EcmpIsDeterministic) {
  const Fabric a = build_fat_tree(fat_spec(3, 8, 128, 8));
  const Fabric b = build_fat_tree(fat_spec(3, 8, 128, 8));
  for (NodeId v = first_switch(a); v < a.node_count(); ++v) {
    for (GpuId dst = 0; dst < 128; dst += 5) {
      for (std::uint64_t h = 0; h < 20; ++h) {
        const std::uint64_t hash = h * 0x100000001b3ull;
        const LinkId l = a.ecmp_link(v, dst, hash);
        ASSERT_EQ(l, a.ecmp_link(v, dst, hash));
        ASSERT_EQ(l, b.ecmp_link(v, dst, hash));
        const auto next = a.next_links(v, dst);
        ASSERT_NE(std::find(next.begin(), next.end(), l), next.end());
      }
    }
  }
}

TEST(Routing, EcmpSpreadsFlowsOverEveryUplink) {
  for (const auto& spec : {fat_spec(2, 16, 128, 8), fat_spec(2, 64, 2048, 8),
                           fat_spec(3, 8, 128, 8), fat_spec(3, 16, 1024, 8, 1, 2)}) {
    const Fabric f = build_fat_tree(spec);
    SCOPED_TRACE(f.description());
    const GpuId last = f.gpu_count() - 1;  // on the last leaf (and pod)
    for (NodeId v = first_switch(f); v < f.node_count(); ++v) {
      const Node& n = f.node(v);
      std::set<LinkId> ups;
      for (const LinkId l : f.out_links(v)) {
        if (f.link(l).up) ups.insert(l);
      }
      if (ups.empty()) continue;
      const bool below = leaves_below(f, v).contains(f.link(f.nic_links(last).front()).to);
      if (below) continue;
      std::set<LinkId> chosen;
      for (std::uint64_t h = 0; h < 64 * ups.size(); ++h) chosen.insert(f.ecmp_link(v, last, h));
      ASSERT_EQ(chosen, ups) << "level " << int{n.level} << " node " << v;
    }
  }
}

TEST(Routing, EcmpSpreadsFlowsOfOneDestinationAcrossSpines) {
  // Flows from one leaf to one GPU on another leaf: with many flow hashes, each
  // spine carries some of them and none carries them all.
  const Fabric f = build_fat_tree(fat_spec(2, 16, 128, 1));
  const NodeId leaf0 = first_switch(f);
  std::map<NodeId, int> per_spine;
  for (std::uint64_t h = 0; h < 800; ++h) ++per_spine[f.link(f.ecmp_link(leaf0, 127, h)).to];
  ASSERT_EQ(per_spine.size(), 8u);
  for (const auto& [spine, flows] : per_spine) {
    EXPECT_GT(flows, 40) << spine;  // ~100 each
    EXPECT_LT(flows, 200) << spine;
  }
}

// --- oversubscription ---

TEST(FatTree, LeafOversubscriptionTwoTier) {
  const Fabric f = build_fat_tree(fat_spec(2, 16, 128, 8, 4));
  const Census c = census(f);
  EXPECT_EQ(c.switches[1], 16u);
  EXPECT_EQ(c.switches[2], 2u);  // 8 uplink ports / 4
  for (NodeId v = first_switch(f); v < f.node_count(); ++v) {
    std::uint32_t up = 0, down = 0;
    for (const LinkId l : f.out_links(v)) (f.link(l).up ? up : down) += 1;
    if (f.node(v).level == 1) {
      EXPECT_EQ(down, 8u);
      EXPECT_EQ(up, 2u);
    } else {
      EXPECT_EQ(down, 16u);
      EXPECT_EQ(up, 0u);
    }
  }
  const FabricSummary s = summarize(f);
  ASSERT_EQ(s.levels.size(), 2u);
  EXPECT_EQ(s.levels[0].name, "leaf");
  EXPECT_EQ(s.levels[0].switches, 16u);
  EXPECT_EQ(s.levels[0].down_ports, 8u);
  EXPECT_EQ(s.levels[0].up_ports, 2u);
  EXPECT_DOUBLE_EQ(s.levels[0].oversubscription, 4.0);
  EXPECT_EQ(s.levels[1].name, "spine");
  EXPECT_EQ(s.levels[1].switches, 2u);
  EXPECT_EQ(s.levels[1].down_ports, 16u);
  EXPECT_EQ(s.levels[1].up_ports, 0u);
  EXPECT_DOUBLE_EQ(s.levels[1].oversubscription, 0.0);
  EXPECT_EQ(s.bisection, 128 * kRate / 4 / 2);
  // Routing still reaches every leaf through the two spines.
  EXPECT_EQ(f.path_latency(0, 127), 4 * kLatency);
}

TEST(FatTree, AggregationOversubscriptionThreeTier) {
  const Fabric f = build_fat_tree(fat_spec(3, 8, 128, 8, 1, 4));
  const Census c = census(f);
  EXPECT_EQ(c.switches[1], 32u);
  EXPECT_EQ(c.switches[2], 32u);
  EXPECT_EQ(c.switches[3], 4u);  // 4 aggregation switches per pod, 1 uplink each
  EXPECT_EQ(c.up_links.at(Tier::kCore), 32u);
  const FabricSummary s = summarize(f);
  ASSERT_EQ(s.levels.size(), 3u);
  EXPECT_DOUBLE_EQ(s.levels[0].oversubscription, 1.0);
  EXPECT_EQ(s.levels[1].name, "spine");
  EXPECT_EQ(s.levels[1].down_ports, 4u);
  EXPECT_EQ(s.levels[1].up_ports, 1u);
  EXPECT_DOUBLE_EQ(s.levels[1].oversubscription, 4.0);
  EXPECT_EQ(s.levels[2].name, "core");
  EXPECT_EQ(s.levels[2].switches, 4u);
  EXPECT_EQ(s.levels[2].down_ports, 8u);  // one per pod
  EXPECT_EQ(s.levels[2].up_ports, 0u);
  EXPECT_EQ(s.bisection, 32 * kRate / 2);
  for (GpuId dst = 8; dst < 128; dst += 8) {
    int hops = 0;
    Time latency = 0;
    for (std::uint64_t h = 0; h < 8; ++h) {
      ASSERT_TRUE(walk(f, 0, dst, h, hops, latency));
      EXPECT_EQ(hops, dst < 16 ? 4 : 6) << dst;  // pods of 16 GPUs
    }
  }
}

// --- errors ---

TEST(FatTreeErrors, Radix) {
  for (const std::uint32_t radix : {0u, 2u, 7u, 15u}) {
    EXPECT_TRUE(Has(error_of([&] { build_fat_tree(fat_spec(2, radix, 8, 1)); }),
                    "radix must be an even number >= 4"))
        << radix;
  }
}

TEST(FatTreeErrors, Tiers) {
  for (const int tiers : {0, 1, 4}) {
    EXPECT_TRUE(
        Has(error_of([&] { build_fat_tree(fat_spec(tiers, 8, 8, 1)); }), "tiers must be 2 or 3"))
        << tiers;
  }
}

TEST(FatTreeErrors, OversubscriptionMustDivide) {
  const std::string e = error_of([] { build_fat_tree(fat_spec(2, 16, 16, 8, 3)); });
  EXPECT_TRUE(Has(e, "leaf_oversubscription 3:1"));
  EXPECT_TRUE(Has(e, "8 host ports"));
  EXPECT_TRUE(Has(e, "radix 16"));
  EXPECT_TRUE(Has(error_of([] { build_fat_tree(fat_spec(2, 16, 16, 8, 0)); }),
                  "leaf_oversubscription 0:1"));
  EXPECT_TRUE(Has(error_of([] { build_fat_tree(fat_spec(2, 16, 16, 8, 16)); }),
                  "leaf_oversubscription 16:1"));
  EXPECT_TRUE(Has(error_of([] { build_fat_tree(fat_spec(3, 8, 16, 8, 1, 3)); }),
                  "aggregation_oversubscription 3:1 must divide 4"));
  EXPECT_TRUE(Has(error_of([] { build_fat_tree(fat_spec(3, 8, 16, 8, 1, 0)); }),
                  "aggregation_oversubscription 0:1"));
}

TEST(FatTreeErrors, AggregationOversubscriptionNeedsThreeTiers) {
  EXPECT_TRUE(Has(error_of([] { build_fat_tree(fat_spec(2, 8, 16, 8, 1, 2)); }),
                  "aggregation_oversubscription needs tiers = 3"));
}

TEST(FatTreeErrors, TooManyGpusForTwoTiers) {
  const std::string e = error_of([] { build_fat_tree(fat_spec(2, 8, 40, 8)); });
  EXPECT_TRUE(Has(e, "2-tier fat tree of radix 8 holds at most 32 GPUs"));
  EXPECT_TRUE(Has(e, "40 need 10 leaves"));
  EXPECT_TRUE(Has(e, "tiers = 3"));
  // The same GPUs fit in 3 tiers.
  EXPECT_EQ(build_fat_tree(fat_spec(3, 8, 40, 8)).gpu_count(), 40u);
}

TEST(FatTreeErrors, TooManyPodsForThreeTiers) {
  const std::string e = error_of([] { build_fat_tree(fat_spec(3, 4, 17, 1)); });
  EXPECT_TRUE(Has(e, "3-tier fat tree of radix 4 holds at most 16 GPUs"));
  EXPECT_TRUE(Has(e, "5 pods"));
  EXPECT_TRUE(Has(e, "larger radix"));
  EXPECT_TRUE(
      Has(error_of([] { build_fat_tree(fat_spec(3, 8, 136, 8)); }), "holds at most 128 GPUs"));
}

TEST(FatTreeErrors, GpusMultipleOfServer) {
  EXPECT_TRUE(Has(error_of([] { build_fat_tree(fat_spec(2, 8, 12, 8)); }),
                  "gpus (12) must be a positive multiple of gpus_per_server (8)"));
  EXPECT_TRUE(Has(error_of([] { build_fat_tree(fat_spec(3, 8, 0, 8)); }),
                  "gpus (0) must be a positive multiple of gpus_per_server (8)"));
  EXPECT_TRUE(Has(error_of([] { build_fat_tree(fat_spec(2, 8, 8, 0)); }),
                  "gpus_per_server must be at least 1"));
}

TEST(FabricLayout, FinishTwiceIsAnError) {
  Fabric f("test", "twice", 2, 1);
  f.add_servers(kNvRate, kNvLatency);
  const NodeId sw = f.add_switch(1, 0, 0, 0);
  f.connect(f.gpu_node(0), sw, kRate, kLatency, Tier::kHost);
  f.connect(f.gpu_node(1), sw, kRate, kLatency, Tier::kHost);
  f.finish();
  EXPECT_TRUE(Has(error_of([&] { f.finish(); }), "finish called twice"));
}

TEST(FabricLayout, GpuWithoutNetworkPortIsAnError) {
  Fabric f("test", "no port", 2, 1);
  f.add_servers(kNvRate, kNvLatency);
  const NodeId sw = f.add_switch(1, 0, 0, 0);
  f.connect(f.gpu_node(0), sw, kRate, kLatency, Tier::kHost);
  EXPECT_TRUE(Has(error_of([&] { f.finish(); }), "GPU 1 has no network port"));
}

TEST(FabricLayout, TierNames) {
  EXPECT_EQ(tier_name(Tier::kNvlink), "nvlink");
  EXPECT_EQ(tier_name(Tier::kHost), "host-leaf");
  EXPECT_EQ(tier_name(Tier::kSpine), "leaf-spine");
  EXPECT_EQ(tier_name(Tier::kCore), "spine-core");
}

}  // namespace
}  // namespace shoal::topo
