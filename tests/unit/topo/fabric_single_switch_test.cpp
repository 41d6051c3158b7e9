// The single-switch fabric: its shape against hand counts, routes and path
// latencies, and the errors that name an impossible setting.
#include "shoal/topo/builders.hpp"

#include <gtest/gtest.h>

#include "error_checks.hpp"
#include "fabric_test_support.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::topo {
namespace {

using namespace fabric_test;
using shoal::test::error_of;
using shoal::test::Has;

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

}  // namespace
}  // namespace shoal::topo
