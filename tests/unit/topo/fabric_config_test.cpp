// The [topology] table of a run config: fabrics built from it, their defaults, the
// errors that name the file, and the "R:1" oversubscription text.
#include "shoal/topo/fabric_config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "error_checks.hpp"
#include "fabric_config_test_support.hpp"
#include "shoal/config/config_file.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::topo {
namespace {

using namespace fabric_config_test;
using shoal::test::error_of;
using shoal::test::Has;

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

}  // namespace
}  // namespace shoal::topo
