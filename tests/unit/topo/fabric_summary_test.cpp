// The fabric summary that `shoal topo` prints (summarize): switches and ports by
// level, oversubscription, links per tier and bisection bandwidth.
#include "shoal/topo/fabric_config.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabric_config_test_support.hpp"
#include "shoal/topo/builders.hpp"

namespace shoal::topo {
namespace {

using namespace fabric_config_test;

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
