// What the tests of topo/fabric_config.hpp share: gigabits per second, and fat-tree
// specs at 100 Gb/s and 1 us a hop.
#pragma once

#include <cstdint>

#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric.hpp"

namespace shoal::topo::fabric_config_test {

inline constexpr BitsPerSecond kGbps = 1'000'000'000;

inline FatTreeSpec fat_spec(int tiers, std::uint32_t radix, GpuId gpus, std::uint32_t per_server,
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

}  // namespace shoal::topo::fabric_config_test
