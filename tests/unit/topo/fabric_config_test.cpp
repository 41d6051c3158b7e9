// The [topology] table of a run config, the fabric-aware partition strategies,
// and the summary that `shoal topo` prints.
#include "shoal/topo/fabric_config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "error_checks.hpp"
#include "shoal/config/config_file.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::topo {
namespace {

using shoal::test::error_of;
using shoal::test::Has;

constexpr BitsPerSecond kGbps = 1'000'000'000;

/// Counts of switches by level (index 1..3).
std::vector<std::uint32_t> switches_by_level(const Fabric& f) {
  std::vector<std::uint32_t> out(4, 0);
  for (NodeId v = 0; v < f.node_count(); ++v) {
    if (f.node(v).kind == NodeKind::kSwitch) ++out.at(f.node(v).level);
  }
  return out;
}

/// The rate and latency of the first link of `tier` (all links of a tier share them).
const Link& first_link(const Fabric& f, Tier tier) {
  for (LinkId l = 0; l < f.link_count(); ++l) {
    if (f.link(l).tier == tier) return f.link(l);
  }
  ADD_FAILURE() << "no link of tier " << tier_name(tier);
  return f.link(0);
}

void expect_tier(const Fabric& f, Tier tier, BitsPerSecond rate, Time latency) {
  for (LinkId l = 0; l < f.link_count(); ++l) {
    if (f.link(l).tier != tier) continue;
    EXPECT_EQ(f.link(l).rate, rate) << tier_name(tier) << " link " << l;
    EXPECT_EQ(f.link(l).latency, latency) << tier_name(tier) << " link " << l;
  }
  EXPECT_EQ(first_link(f, tier).tier, tier);
}

/// Writes config text to unique temporary files and builds fabrics from them.
class FabricConfig : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const auto& p : paths_) {
      std::error_code ec;
      std::filesystem::remove(p, ec);
    }
  }

  std::string write(std::string_view text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::filesystem::path p =
        std::filesystem::temp_directory_path() /
        ("shoal_fabric_config_test_" + std::to_string(::getpid()) + "_" + info->name() + "_" +
         std::to_string(paths_.size()) + ".toml");
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    EXPECT_TRUE(out) << "could not write " << p;
    paths_.push_back(p);
    return p.string();
  }

  Fabric load(std::string_view text) {
    config::ConfigFile config(write(text));
    return build_fabric(config);
  }

  /// The error of building `text`; it must name the file.
  std::string load_error(std::string_view text) {
    const std::string path = write(text);
    const std::string e = error_of([&] {
      config::ConfigFile config(path);
      build_fabric(config);
    });
    EXPECT_TRUE(Has(e, "config " + path));
    return e;
  }

  std::vector<std::filesystem::path> paths_;
};

// --- building from [topology] ---

TEST_F(FabricConfig, FatTreeWithUnits) {
  const Fabric f = load(R"(
[topology]
kind = "fat-tree"
gpus = 64
gpus_per_server = 8
tiers = 2
radix = 16
leaf_oversubscription = "2:1"
link_rate = "400Gbps"
link_latency = "2us"
nvlink_rate = "900GB/s"
nvlink_latency = "25ns"
)");
  EXPECT_EQ(f.kind(), "fat-tree");
  EXPECT_EQ(f.description(), "2-tier radix=16 gpus=64 per_server=8 leaf=2:1");
  EXPECT_EQ(f.gpu_count(), 64u);
  EXPECT_EQ(f.server_count(), 8u);
  const auto levels = switches_by_level(f);
  EXPECT_EQ(levels[1], 8u);  // 8 hosts per leaf
  EXPECT_EQ(levels[2], 4u);  // 8 uplink ports at 2:1
  EXPECT_EQ(levels[3], 0u);
  expect_tier(f, Tier::kHost, 400 * kGbps, 2 * kMicrosecond);
  expect_tier(f, Tier::kSpine, 400 * kGbps, 2 * kMicrosecond);
  expect_tier(f, Tier::kNvlink, 7200 * kGbps, 25 * kNanosecond);
  EXPECT_EQ(f.path_latency(0, 63), 4 * 2 * kMicrosecond);
  EXPECT_EQ(f.path_latency(0, 7), 2 * 25 * kNanosecond);
}

TEST_F(FabricConfig, ThreeTierWithAggregationOversubscription) {
  const Fabric f = load(R"(
[topology]
kind = "fat-tree"
gpus = 128
gpus_per_server = 4
tiers = 3
radix = 8
leaf_oversubscription = "1:1"
aggregation_oversubscription = "2:1"
link_latency = "500ns"
)");
  EXPECT_EQ(f.description(), "3-tier radix=8 gpus=128 per_server=4 leaf=1:1 aggregation=2:1");
  const auto levels = switches_by_level(f);
  EXPECT_EQ(levels[1], 32u);
  EXPECT_EQ(levels[2], 32u);
  EXPECT_EQ(levels[3], 8u);
  expect_tier(f, Tier::kCore, 100 * kGbps, 500 * kNanosecond);
  EXPECT_EQ(f.path_latency(0, 127), 6 * 500 * kNanosecond);
}

TEST_F(FabricConfig, TheExampleFatTree1024) {
  // configs/fabrics/fat-tree-1024.toml
  const Fabric f = load(R"(
[topology]
kind = "fat-tree"
gpus = 1024
gpus_per_server = 8
tiers = 2
radix = 64                 # 32 hosts per leaf: 32 leaves, 32 spines
link_rate = "100Gbps"
link_latency = "1us"       # htsim's per-hop default
nvlink_rate = "3600Gbps"
nvlink_latency = "25ns"    # SimAI's NVSwitch default
)");
  EXPECT_EQ(f.gpu_count(), 1024u);
  EXPECT_EQ(f.server_count(), 128u);
  const auto levels = switches_by_level(f);
  EXPECT_EQ(levels[1], 32u);
  EXPECT_EQ(levels[2], 32u);
  expect_tier(f, Tier::kHost, 100 * kGbps, kMicrosecond);
  expect_tier(f, Tier::kNvlink, 3600 * kGbps, 25 * kNanosecond);
  const FabricSummary s = summarize(f);
  EXPECT_EQ(s.bisection, 1024 * 100 * kGbps / 2);
}

TEST_F(FabricConfig, SingleSwitchWithUnits) {
  const Fabric f = load(R"(
[topology]
kind = "single-switch"
gpus = 32
gpus_per_server = 4
link_rate = "100Gbps"
link_latency = "1us"
nvlink_latency = "25ns"
)");
  EXPECT_EQ(f.kind(), "single-switch");
  EXPECT_EQ(f.description(), "gpus=32 per_server=4");
  EXPECT_EQ(f.gpu_count(), 32u);
  EXPECT_EQ(f.server_count(), 8u);
  EXPECT_EQ(switches_by_level(f)[1], 1u);
  expect_tier(f, Tier::kHost, 100 * kGbps, kMicrosecond);
  expect_tier(f, Tier::kNvlink, 3600 * kGbps, 25 * kNanosecond);  // default rate
  EXPECT_EQ(f.path_latency(0, 31), 2 * kMicrosecond);
}

TEST_F(FabricConfig, Defaults) {
  const Fabric ft = load("[topology]\nkind = \"fat-tree\"\n");
  EXPECT_EQ(ft.gpu_count(), 16u);
  EXPECT_EQ(ft.gpus_per_server(), 8u);
  EXPECT_EQ(ft.description(), "2-tier radix=64 gpus=16 per_server=8 leaf=1:1");
  const auto levels = switches_by_level(ft);
  EXPECT_EQ(levels[1], 1u);   // 16 GPUs fit on one 32-host leaf
  EXPECT_EQ(levels[2], 32u);  // radix 64, 1:1
  expect_tier(ft, Tier::kHost, 100 * kGbps, kMicrosecond);
  expect_tier(ft, Tier::kSpine, 100 * kGbps, kMicrosecond);
  expect_tier(ft, Tier::kNvlink, 3600 * kGbps, 25 * kNanosecond);

  const Fabric ss = load("[topology]\nkind = \"single-switch\"\n");
  EXPECT_EQ(ss.gpu_count(), 16u);
  EXPECT_EQ(ss.gpus_per_server(), 8u);
  expect_tier(ss, Tier::kHost, 100 * kGbps, kMicrosecond);
}

TEST_F(FabricConfig, UnknownKeyNamesFileAndKey) {
  std::string e = load_error(R"([topology]
kind = "fat-tree"
gpus = 64
radixx = 16
)");
  EXPECT_TRUE(Has(e, "line 4"));
  EXPECT_TRUE(Has(e, "unknown key 'topology.radixx'"));
  // A fat-tree key is unknown to a single switch.
  e = load_error("[topology]\nkind = \"single-switch\"\nradix = 16\n");
  EXPECT_TRUE(Has(e, "unknown key 'topology.radix'"));
  e = load_error("[topology]\nkind = \"single-switch\"\nleaf_oversubscription = \"1:1\"\n");
  EXPECT_TRUE(Has(e, "unknown key 'topology.leaf_oversubscription'"));
}

TEST_F(FabricConfig, BadKind) {
  std::string e = load_error("[topology]\nkind = \"torus\"\n");
  EXPECT_TRUE(Has(e,
                  "topology.kind \"torus\" is unknown (use single-switch, fat-tree, rail-optimized "
                  "or multi-plane)"));
  e = load_error("[topology]\ngpus = 8\n");
  EXPECT_TRUE(Has(e, "topology.kind is missing"));
  e = load_error("[other]\nx = 1\n");
  EXPECT_TRUE(Has(e, "topology.kind is missing"));
  e = load_error("[topology]\nkind = 3\n");
  EXPECT_TRUE(Has(e, "topology.kind must be a string"));
}

TEST_F(FabricConfig, BadOversubscriptionText) {
  for (const std::string text : {"4", "4:2", "x:1", "0:1", ":1", "4:1:1"}) {
    SCOPED_TRACE(text);
    const std::string e = load_error(
        "[topology]\nkind = \"fat-tree\"\nradix = 16\n"
        "leaf_oversubscription = \"" +
        text + "\"\n");
    EXPECT_TRUE(
        Has(e, "topology.leaf_oversubscription: invalid oversubscription \"" + text + "\""));
  }
  const std::string e = load_error(
      "[topology]\nkind = \"fat-tree\"\ntiers = 3\nradix = 8\naggregation_oversubscription = "
      "\"2\"\n");
  EXPECT_TRUE(Has(e, "topology.aggregation_oversubscription: invalid oversubscription \"2\""));
  // A number is not the "R:1" text.
  EXPECT_TRUE(Has(load_error("[topology]\nkind = \"fat-tree\"\nleaf_oversubscription = 4\n"),
                  "topology.leaf_oversubscription must be a string"));
}

TEST_F(FabricConfig, OversubscriptionTheTreeCannotMeet) {
  std::string e =
      load_error("[topology]\nkind = \"fat-tree\"\nradix = 16\nleaf_oversubscription = \"3:1\"\n");
  EXPECT_TRUE(Has(e, "[topology]: leaf_oversubscription 3:1 must divide the 8 host ports"));
  e = load_error(
      "[topology]\nkind = \"fat-tree\"\ntiers = 2\naggregation_oversubscription = \"2:1\"\n");
  EXPECT_TRUE(Has(e, "[topology]: aggregation_oversubscription needs tiers = 3"));
}

TEST_F(FabricConfig, LatencyMustBePositive) {
  std::string e = load_error("[topology]\nkind = \"fat-tree\"\nlink_latency = \"0us\"\n");
  EXPECT_TRUE(Has(e, "topology.link_latency must be positive"));
  e = load_error("[topology]\nkind = \"single-switch\"\nlink_latency = \"0ns\"\n");
  EXPECT_TRUE(Has(e, "topology.link_latency must be positive"));
  e = load_error("[topology]\nkind = \"fat-tree\"\nlink_latency = \"-1us\"\n");
  EXPECT_TRUE(Has(e, "line 3"));
  EXPECT_TRUE(Has(e, "topology.link_latency"));
  EXPECT_TRUE(Has(e, "must not be negative"));
  e = load_error("[topology]\nkind = \"fat-tree\"\nnvlink_latency = \"-25ns\"\n");
  EXPECT_TRUE(Has(e, "topology.nvlink_latency"));
  EXPECT_TRUE(Has(e, "must not be negative"));
  e = load_error("[topology]\nkind = \"fat-tree\"\nlink_latency = \"1\"\n");
  EXPECT_TRUE(Has(e, "topology.link_latency"));
  EXPECT_TRUE(Has(e, "missing unit"));
}

TEST_F(FabricConfig, BadRates) {
  std::string e = load_error("[topology]\nkind = \"fat-tree\"\nlink_rate = \"0Gbps\"\n");
  EXPECT_TRUE(Has(e, "topology.link_rate"));
  EXPECT_TRUE(Has(e, "must be greater than zero"));
  e = load_error("[topology]\nkind = \"fat-tree\"\nnvlink_rate = 100\n");
  EXPECT_TRUE(Has(e, "topology.nvlink_rate must be a string with a unit"));
  e = load_error("[topology]\nkind = \"fat-tree\"\nlink_rate = \"100Gbs\"\n");
  EXPECT_TRUE(Has(e, "topology.link_rate"));
  EXPECT_TRUE(Has(e, "unknown unit"));
}

TEST_F(FabricConfig, CountsOutOfRange) {
  struct Case {
    std::string key;
    std::string value;
    std::string message;
  };
  const Case cases[] = {
      {"gpus", "0", "topology.gpus must be between 1 and 1048576"},
      {"gpus", "-8", "topology.gpus must be between 1 and 1048576"},
      {"gpus", "1048577", "topology.gpus must be between 1 and 1048576"},
      {"gpus_per_server", "0", "topology.gpus_per_server must be between 1 and 64"},
      {"gpus_per_server", "65", "topology.gpus_per_server must be between 1 and 64"},
      {"tiers", "0", "topology.tiers must be between 1 and 3"},
      {"tiers", "4", "topology.tiers must be between 1 and 3"},
      {"radix", "0", "topology.radix must be between 1 and 4096"},
      {"radix", "4097", "topology.radix must be between 1 and 4096"},
      {"gpus", "\"16\"", "topology.gpus must be an integer"},
      {"radix", "16.0", "topology.radix must be an integer"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key + " = " + c.value);
    EXPECT_TRUE(
        Has(load_error("[topology]\nkind = \"fat-tree\"\n" + c.key + " = " + c.value + "\n"),
            c.message));
  }
  // The single switch checks the GPU counts too.
  EXPECT_TRUE(Has(load_error("[topology]\nkind = \"single-switch\"\ngpus = 0\n"),
                  "topology.gpus must be between 1 and 1048576"));
}

// Was cast to 32 bits unchecked: -1 became 4294967295 and 4294967297 became 1.
TEST_F(FabricConfig, SegmentServersOutOfRange) {
  for (const char* value : {"-1", "4097", "4294967297"}) {
    SCOPED_TRACE(value);
    EXPECT_TRUE(Has(load_error("[topology]\nkind = \"rail-optimized\"\nsegment_servers = " +
                               std::string(value) + "\n"),
                    "topology.segment_servers must be between 0 (radix/2) and 4096"));
  }
}

TEST_F(FabricConfig, BuilderErrorsNameTheFile) {
  std::string e = load_error("[topology]\nkind = \"fat-tree\"\ngpus = 12\ngpus_per_server = 8\n");
  EXPECT_TRUE(Has(e, "[topology]: gpus (12) must be a positive multiple of gpus_per_server (8)"));
  e = load_error("[topology]\nkind = \"single-switch\"\ngpus = 12\ngpus_per_server = 8\n");
  EXPECT_TRUE(Has(e, "[topology]: gpus (12) must be a positive multiple of gpus_per_server (8)"));
  e = load_error("[topology]\nkind = \"fat-tree\"\ngpus = 2049\ngpus_per_server = 1\nradix = 64\n");
  EXPECT_TRUE(Has(e, "[topology]: a 2-tier fat tree of radix 64 holds at most 2048 GPUs"));
  EXPECT_TRUE(Has(e, "tiers = 3"));
  e = load_error("[topology]\nkind = \"fat-tree\"\ntiers = 1\n");
  EXPECT_TRUE(Has(e, "[topology]: tiers must be 2 or 3"));
  e = load_error("[topology]\nkind = \"fat-tree\"\nradix = 7\n");
  EXPECT_TRUE(Has(e, "[topology]: radix must be an even number >= 4"));
  e = load_error(
      "[topology]\nkind = \"fat-tree\"\ntiers = 3\nradix = 4\ngpus = 24\n"
      "gpus_per_server = 4\n");
  EXPECT_TRUE(Has(e, "[topology]: a 3-tier fat tree of radix 4 holds at most 16 GPUs"));
}

TEST_F(FabricConfig, SyntaxErrorNamesLine) {
  const std::string e = load_error("[topology]\nkind = \"fat-tree\"\ngpus = \n");
  EXPECT_TRUE(Has(e, "line 3"));
}

// --- parse_oversubscription ---

TEST(FabricOversubscription, Parses) {
  EXPECT_EQ(parse_oversubscription("1:1"), 1u);
  EXPECT_EQ(parse_oversubscription("2:1"), 2u);
  EXPECT_EQ(parse_oversubscription("4:1"), 4u);
  EXPECT_EQ(parse_oversubscription("16:1"), 16u);
  EXPECT_EQ(parse_oversubscription("04:1"), 4u);
  EXPECT_EQ(parse_oversubscription("4294967295:1"), 4294967295u);
}

TEST(FabricOversubscription, Rejects) {
  for (const std::string_view text : {"",
                                      "4",
                                      "1",
                                      "4:2",
                                      "4:0",
                                      "4:",
                                      ":1",
                                      ":",
                                      "x:1",
                                      "4x:1",
                                      "0:1",
                                      "00:1",
                                      "-4:1",
                                      "+4:1",
                                      " 4:1",
                                      "4:1 ",
                                      "4 :1",
                                      "4.5:1",
                                      "4:1.0",
                                      "4:1:1",
                                      "1:4",
                                      "4294967296:1",
                                      "99999999999999999999:1"}) {
    const std::string e = error_of([&] { parse_oversubscription(text); });
    EXPECT_TRUE(Has(e, "invalid oversubscription \"" + std::string(text) + "\"")) << text;
    EXPECT_TRUE(Has(e, "R:1")) << text;
  }
}

// --- partition_fabric ---

FatTreeSpec fat_spec(int tiers, std::uint32_t radix, GpuId gpus, std::uint32_t per_server,
                     std::uint32_t r_leaf = 1, std::uint32_t r_agg = 1) {
  FatTreeSpec s;
  s.base.gpus = gpus;
  s.base.gpus_per_server = per_server;
  s.base.link_rate = 100 * kGbps;
  s.base.link_latency = kMicrosecond;
  s.base.nvlink_latency = 25 * kNanosecond;
  s.tiers = tiers;
  s.radix = radix;
  s.leaf_oversubscription = r_leaf;
  s.aggregation_oversubscription = r_agg;
  return s;
}

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

// --- summarize ---

TEST(Summarize, FullTwoTier) {
  const FabricSummary s = summarize(build_fat_tree(fat_spec(2, 8, 32, 8)));
  EXPECT_EQ(s.gpus, 32u);
  EXPECT_EQ(s.servers, 4u);
  ASSERT_EQ(s.levels.size(), 2u);
  EXPECT_EQ(s.levels[0].name, "leaf");
  EXPECT_EQ(s.levels[0].switches, 8u);
  EXPECT_EQ(s.levels[0].down_ports, 4u);
  EXPECT_EQ(s.levels[0].up_ports, 4u);
  EXPECT_DOUBLE_EQ(s.levels[0].oversubscription, 1.0);
  EXPECT_EQ(s.levels[1].name, "spine");
  EXPECT_EQ(s.levels[1].switches, 4u);
  EXPECT_EQ(s.levels[1].down_ports, 8u);
  EXPECT_EQ(s.levels[1].up_ports, 0u);
  EXPECT_DOUBLE_EQ(s.levels[1].oversubscription, 0.0);
  const std::vector<std::pair<std::string, std::uint32_t>> tiers = {
      {"nvlink", 32}, {"host-leaf", 32}, {"leaf-spine", 32}};
  EXPECT_EQ(s.links_per_tier, tiers);
  EXPECT_EQ(s.bisection, 32 * 100 * kGbps / 2);
}

TEST(Summarize, FullThreeTier) {
  const FabricSummary s = summarize(build_fat_tree(fat_spec(3, 8, 128, 1)));
  EXPECT_EQ(s.gpus, 128u);
  EXPECT_EQ(s.servers, 128u);
  ASSERT_EQ(s.levels.size(), 3u);
  const char* names[] = {"leaf", "spine", "core"};
  const std::uint32_t switches[] = {32, 32, 16};
  const std::uint32_t down[] = {4, 4, 8};
  const std::uint32_t up[] = {4, 4, 0};
  const double over[] = {1.0, 1.0, 0.0};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(s.levels[i].name, names[i]);
    EXPECT_EQ(s.levels[i].switches, switches[i]);
    EXPECT_EQ(s.levels[i].down_ports, down[i]);
    EXPECT_EQ(s.levels[i].up_ports, up[i]);
    EXPECT_DOUBLE_EQ(s.levels[i].oversubscription, over[i]);
  }
  const std::vector<std::pair<std::string, std::uint32_t>> tiers = {
      {"nvlink", 128}, {"host-leaf", 128}, {"leaf-spine", 128}, {"spine-core", 128}};
  EXPECT_EQ(s.links_per_tier, tiers);
  EXPECT_EQ(s.bisection, 128 * 100 * kGbps / 2);
}

TEST(Summarize, OversubscribedThreeTier) {
  const FabricSummary s = summarize(build_fat_tree(fat_spec(3, 8, 128, 8, 2, 2)));
  EXPECT_EQ(s.servers, 16u);
  ASSERT_EQ(s.levels.size(), 3u);
  EXPECT_EQ(s.levels[0].switches, 32u);
  EXPECT_EQ(s.levels[0].down_ports, 4u);
  EXPECT_EQ(s.levels[0].up_ports, 2u);
  EXPECT_DOUBLE_EQ(s.levels[0].oversubscription, 2.0);
  EXPECT_EQ(s.levels[1].switches, 16u);
  EXPECT_EQ(s.levels[1].down_ports, 4u);
  EXPECT_EQ(s.levels[1].up_ports, 2u);
  EXPECT_DOUBLE_EQ(s.levels[1].oversubscription, 2.0);
  EXPECT_EQ(s.levels[2].switches, 4u);
  EXPECT_EQ(s.levels[2].down_ports, 8u);
  const std::vector<std::pair<std::string, std::uint32_t>> tiers = {
      {"nvlink", 128}, {"host-leaf", 128}, {"leaf-spine", 64}, {"spine-core", 32}};
  EXPECT_EQ(s.links_per_tier, tiers);
  EXPECT_EQ(s.bisection, 32 * 100 * kGbps / 2);  // the core tier, 4:1 overall
}

TEST(Summarize, OversubscribedTwoTier) {
  const FabricSummary s = summarize(build_fat_tree(fat_spec(2, 16, 128, 8, 4)));
  ASSERT_EQ(s.levels.size(), 2u);
  EXPECT_DOUBLE_EQ(s.levels[0].oversubscription, 4.0);
  EXPECT_EQ(s.levels[0].up_ports, 2u);
  EXPECT_EQ(s.levels[1].switches, 2u);
  EXPECT_EQ(s.bisection, (128 * 100 * kGbps / 4) / 2);
}

TEST(Summarize, PartialLeaves) {
  // 6 GPUs on radix-8 leaves: 4 + 2 hosts, 4 uplinks each.
  const FabricSummary s = summarize(build_fat_tree(fat_spec(2, 8, 6, 1)));
  ASSERT_EQ(s.levels.size(), 2u);
  EXPECT_EQ(s.levels[0].switches, 2u);
  EXPECT_EQ(s.levels[0].down_ports, 4u);
  EXPECT_EQ(s.levels[0].up_ports, 4u);
  EXPECT_DOUBLE_EQ(s.levels[0].oversubscription, 6.0 / 8.0);
  EXPECT_EQ(s.levels[1].down_ports, 2u);
  EXPECT_EQ(s.bisection, 6 * 100 * kGbps / 2);  // the hosts are the thinnest tier
}

TEST(Summarize, SingleSwitch) {
  FabricSpec base;
  base.gpus = 16;
  base.gpus_per_server = 8;
  const FabricSummary s = summarize(build_single_switch(base));
  EXPECT_EQ(s.gpus, 16u);
  EXPECT_EQ(s.servers, 2u);
  ASSERT_EQ(s.levels.size(), 1u);
  EXPECT_EQ(s.levels[0].name, "leaf");
  EXPECT_EQ(s.levels[0].switches, 1u);
  EXPECT_EQ(s.levels[0].down_ports, 16u);
  EXPECT_EQ(s.levels[0].up_ports, 0u);
  EXPECT_DOUBLE_EQ(s.levels[0].oversubscription, 0.0);
  const std::vector<std::pair<std::string, std::uint32_t>> tiers = {{"nvlink", 16},
                                                                    {"host-leaf", 16}};
  EXPECT_EQ(s.links_per_tier, tiers);
  EXPECT_EQ(s.bisection, 16 * 100 * kGbps / 2);
}

}  // namespace
}  // namespace shoal::topo
