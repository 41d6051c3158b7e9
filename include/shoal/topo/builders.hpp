// Fabric builders, sized by GPU count. Each returns a finished Fabric or throws
// an Error that names the setting that cannot be met.
#pragma once

#include <cstdint>

#include "shoal/topo/fabric.hpp"

namespace shoal::topo {

/// What every builder needs: the GPUs, their servers, and the links.
struct FabricSpec {
  GpuId gpus = 16;
  std::uint32_t gpus_per_server = 8;
  BitsPerSecond link_rate = 100'000'000'000;      // network links
  Time link_latency = kMicrosecond;               // per network link
  BitsPerSecond nvlink_rate = 3'600'000'000'000;  // per GPU into the NVSwitch
  Time nvlink_latency = 25 * kNanosecond;         // per NVLink hop (SimAI's NVSwitch default)
};

/// All GPUs' NICs on one switch.
Fabric build_single_switch(const FabricSpec& spec);

struct FatTreeSpec {
  FabricSpec base;
  int tiers = 2;                            // 2: leaf-spine; 3: k-ary (leaf, aggregation, core)
  std::uint32_t radix = 64;                 // ports per switch
  std::uint32_t leaf_oversubscription = 1;  // r in "r:1" on leaf uplinks
  std::uint32_t aggregation_oversubscription = 1;  // r on aggregation uplinks (3 tiers)
};

/// Leaves of radix/2 hosts. 2 tiers: every leaf to every spine, radix/2 / r
/// spines. 3 tiers: pods of radix/2 leaves and radix/2 / r aggregation switches,
/// cores above. Oversubscription thins the uplinks (unused ports stay empty).
Fabric build_fat_tree(const FatTreeSpec& spec);

struct RailSpec {
  FabricSpec base;
  std::uint32_t radix = 64;
  std::uint32_t segment_servers = 0;  // servers per segment (0: radix/2)
  bool dual_plane = false;            // each NIC has two ports, to two planes of rail switches
};

/// Rail-optimized (multi-rail) 2-tier fabric, Alibaba HPN style: servers form
/// segments; GPU i of every server in a segment connects to the segment's rail
/// switch i; all rail switches of a plane meet in shared spines (radix/2 of them,
/// every rail switch to every spine). With dual_plane, each NIC has a second port
/// to a rail switch of a second, independent plane.
Fabric build_rail_optimized(const RailSpec& spec);

struct MultiPlaneSpec {
  FabricSpec base;
  std::uint32_t planes = 8;
  std::uint32_t radix = 64;
  std::uint32_t leaf_oversubscription = 1;
};

/// Multi-plane fat tree (DeepSeek-V3 MPFT): `planes` independent 2-tier fat trees;
/// GPU i of a server has its NIC on plane i mod planes. Traffic between GPUs on
/// different planes first crosses NVLink to the GPU of the sender's server on the
/// receiver's plane (PXN), which forwards it.
Fabric build_multi_plane(const MultiPlaneSpec& spec);

}  // namespace shoal::topo
