// The workload the network's equivalence tests (early credits, delivery on
// send) run both ways: traffic that contends on every tier.
#pragma once

#include <string>
#include <vector>

#include "shoal/core/units.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::test {

/// An EP all-to-all among the first half of `gpus` GPUs (about `a2a_bytes` a
/// flow, sizes varied) and a DP ring over all of them (`ring_bytes` a flow),
/// starting together, then a second all-to-all once the first is done. Sizes
/// that are not multiples of a cell, so last cells are short. With `compute` >
/// 0, a task of that length on every GPU once the ring is done, so that tasks
/// end and start as flows do.
inline work::Dag contending_dag(work::GpuId gpus, Bytes a2a_bytes, Bytes ring_bytes,
                                Time compute = 0) {
  work::Dag dag;
  std::vector<work::Flow> a2a, ring;
  const work::GpuId half = gpus / 2;
  for (work::GpuId s = 0; s < half; ++s)
    for (work::GpuId d = 0; d < half; ++d)
      if (s != d) a2a.push_back({s, d, a2a_bytes + 1'000 * ((s * 7 + d) % 5)});
  for (work::GpuId s = 0; s < gpus; ++s) ring.push_back({s, (s + 9) % gpus, ring_bytes});
  work::CoflowLabels ep;
  ep.type = work::CoflowType::kEp;
  work::CoflowLabels dp;
  dp.type = work::CoflowType::kDp;
  dag.add_coflow("ep", ep, 0, a2a, {});
  dag.add_coflow("dp", dp, 0, ring, {});
  if (compute > 0) {
    for (work::GpuId g = 0; g < gpus; ++g) {
      dag.add_task("after-ring-" + std::to_string(g), g, compute, {"dp"});
    }
  }
  ep.micro_batch = 1;
  dag.add_coflow("ep2", ep, 0, a2a, {"ep"});
  dag.resolve();
  return dag;
}

/// A 2-tier leaf-spine of 64 GPUs whose leaves' uplinks are 2:1
/// oversubscribed, so that they congest.
inline topo::Fabric contending_leaf_spine(std::uint32_t gpus_per_server) {
  topo::FatTreeSpec spec;
  spec.base.gpus = 64;
  spec.base.gpus_per_server = gpus_per_server;
  spec.radix = 16;
  spec.leaf_oversubscription = 2;
  return topo::build_fat_tree(spec);
}

/// 64 GPUs, one a server, on a 3-tier fat tree of radix 8: six links a route.
inline topo::Fabric contending_three_tier() {
  topo::FatTreeSpec spec;
  spec.base.gpus = 64;
  spec.base.gpus_per_server = 1;
  spec.tiers = 3;
  spec.radix = 8;
  return topo::build_fat_tree(spec);
}

/// 64 GPUs on 8 planes of radix 16: cross-plane cells relayed over NVLink (PXN).
inline topo::Fabric contending_multi_plane() {
  topo::MultiPlaneSpec spec;
  spec.base.gpus = 64;
  spec.planes = 8;
  spec.radix = 16;
  return topo::build_multi_plane(spec);
}

/// 64 GPUs on a dual-plane rail-optimized fabric of radix 16: a NIC's two ports.
inline topo::Fabric contending_dual_plane_rail() {
  topo::RailSpec spec;
  spec.base.gpus = 64;
  spec.radix = 16;
  spec.dual_plane = true;
  return topo::build_rail_optimized(spec);
}

}  // namespace shoal::test
