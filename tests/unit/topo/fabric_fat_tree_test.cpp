// The fat-tree builder: sizes against hand counts and the closed forms, the largest
// trees of radix 64, oversubscription, and the errors that name an impossible setting.
#include "shoal/topo/builders.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "error_checks.hpp"
#include "fabric_test_support.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::topo {
namespace {

using namespace fabric_test;
using shoal::test::error_of;
using shoal::test::Has;

std::uint32_t switch_count(const Fabric& f) {
  std::uint32_t n = 0;
  for (NodeId v = 0; v < f.node_count(); ++v) n += f.node(v).kind == NodeKind::kSwitch;
  return n;
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

}  // namespace
}  // namespace shoal::topo
