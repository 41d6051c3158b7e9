// The fabric graph's layout: node ids, switch groups, engine atoms and their
// fingerprint, tier names, and the errors of a graph built by hand.
#include "shoal/topo/fabric.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "error_checks.hpp"
#include "fabric_test_support.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/topo/builders.hpp"

namespace shoal::topo {
namespace {

using namespace fabric_test;
using shoal::test::error_of;
using shoal::test::Has;

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
