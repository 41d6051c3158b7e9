#include "shoal/topo/builders.hpp"

#include <string>

#include "shoal/core/error.hpp"

namespace shoal::topo {
namespace {

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

/// Half the ports of a switch face down, half up: the radix must be even.
std::uint32_t half_radix(std::uint32_t radix) {
  if (radix < 4 || radix % 2 != 0) throw Error("radix must be an even number >= 4");
  return radix / 2;
}

/// An "R:1" ratio thins `ports` uplinks to ports / R: R must divide them.
void require_divides(std::string_view key, std::uint32_t ratio, std::uint32_t ports,
                     std::uint32_t radix) {
  if (ratio == 0 || ports % ratio != 0) {
    throw Error(std::string(key) + " " + std::to_string(ratio) + ":1 must divide the " +
                std::to_string(ports) + " host ports of a leaf (radix " + std::to_string(radix) +
                ")");
  }
}

}  // namespace

Fabric build_single_switch(const FabricSpec& spec) {
  Fabric f(
      "single-switch",
      "gpus=" + std::to_string(spec.gpus) + " per_server=" + std::to_string(spec.gpus_per_server),
      spec.gpus, spec.gpus_per_server);
  f.add_servers(spec.nvlink_rate, spec.nvlink_latency);
  const NodeId sw = f.add_switch(1, 0, 0, 0);
  for (GpuId g = 0; g < spec.gpus; ++g) {
    f.connect(f.gpu_node(g), sw, spec.link_rate, spec.link_latency, Tier::kHost);
  }
  f.finish();
  return f;
}

Fabric build_fat_tree(const FatTreeSpec& spec) {
  const FabricSpec& b = spec.base;
  if (spec.tiers != 2 && spec.tiers != 3) throw Error("tiers must be 2 or 3");
  const std::uint32_t half = half_radix(spec.radix);
  const std::uint32_t r_leaf = spec.leaf_oversubscription;
  const std::uint32_t r_agg = spec.aggregation_oversubscription;
  require_divides("leaf_oversubscription", r_leaf, half, spec.radix);
  if (spec.tiers == 2 && r_agg != 1) {
    throw Error(
        "aggregation_oversubscription needs tiers = 3 (a 2-tier fat tree has no aggregation)");
  }
  if (r_agg == 0 || half % r_agg != 0) {
    throw Error("aggregation_oversubscription " + std::to_string(r_agg) + ":1 must divide " +
                std::to_string(half));
  }
  const std::uint32_t leaves = ceil_div(b.gpus, half);
  const std::uint32_t leaf_up = half / r_leaf;

  std::string description =
      std::to_string(spec.tiers) + "-tier radix=" + std::to_string(spec.radix) +
      " gpus=" + std::to_string(b.gpus) + " per_server=" + std::to_string(b.gpus_per_server) +
      " leaf=" + std::to_string(r_leaf) + ":1";
  if (spec.tiers == 3) description += " aggregation=" + std::to_string(r_agg) + ":1";
  Fabric f("fat-tree", description, b.gpus, b.gpus_per_server);
  f.add_servers(b.nvlink_rate, b.nvlink_latency);

  if (spec.tiers == 2) {
    if (leaves > spec.radix) {
      throw Error("a 2-tier fat tree of radix " + std::to_string(spec.radix) + " holds at most " +
                  std::to_string(spec.radix * half) + " GPUs (" + std::to_string(b.gpus) +
                  " need " + std::to_string(leaves) + " leaves); use tiers = 3 or a larger radix");
    }
    std::vector<NodeId> leaf(leaves), spine(leaf_up);
    for (std::uint32_t l = 0; l < leaves; ++l) leaf[l] = f.add_switch(1, 0, l, l);
    for (std::uint32_t s = 0; s < leaf_up; ++s) spine[s] = f.add_switch(2, 0, 0, s);
    for (GpuId g = 0; g < b.gpus; ++g) {
      f.connect(f.gpu_node(g), leaf[g / half], b.link_rate, b.link_latency, Tier::kHost);
    }
    for (std::uint32_t l = 0; l < leaves; ++l) {
      for (std::uint32_t s = 0; s < leaf_up; ++s) {
        f.connect(leaf[l], spine[s], b.link_rate, b.link_latency, Tier::kSpine);
      }
    }
  } else {
    const std::uint32_t pods = ceil_div(leaves, half);
    if (pods > spec.radix) {
      throw Error("a 3-tier fat tree of radix " + std::to_string(spec.radix) + " holds at most " +
                  std::to_string(spec.radix * half * half) + " GPUs (" + std::to_string(b.gpus) +
                  " need " + std::to_string(pods) + " pods); use a larger radix");
    }
    const std::uint32_t aggs = leaf_up;         // per pod
    const std::uint32_t agg_up = half / r_agg;  // core links per aggregation switch
    std::vector<NodeId> leaf(leaves), agg(pods * aggs), core(aggs * agg_up);
    for (std::uint32_t l = 0; l < leaves; ++l) leaf[l] = f.add_switch(1, 0, l / half, l);
    for (std::uint32_t p = 0; p < pods; ++p) {
      for (std::uint32_t a = 0; a < aggs; ++a)
        agg[p * aggs + a] = f.add_switch(2, 0, p, p * aggs + a);
    }
    for (std::uint32_t c = 0; c < core.size(); ++c) core[c] = f.add_switch(3, 0, 0, c);
    for (GpuId g = 0; g < b.gpus; ++g) {
      f.connect(f.gpu_node(g), leaf[g / half], b.link_rate, b.link_latency, Tier::kHost);
    }
    for (std::uint32_t l = 0; l < leaves; ++l) {
      const std::uint32_t pod = l / half;
      for (std::uint32_t a = 0; a < aggs; ++a) {
        f.connect(leaf[l], agg[pod * aggs + a], b.link_rate, b.link_latency, Tier::kSpine);
      }
    }
    // Aggregation switch a of every pod reaches cores [a*agg_up, (a+1)*agg_up).
    for (std::uint32_t p = 0; p < pods; ++p) {
      for (std::uint32_t a = 0; a < aggs; ++a) {
        for (std::uint32_t c = 0; c < agg_up; ++c) {
          f.connect(agg[p * aggs + a], core[a * agg_up + c], b.link_rate, b.link_latency,
                    Tier::kCore);
        }
      }
    }
  }
  f.finish();
  return f;
}

Fabric build_rail_optimized(const RailSpec& spec) {
  const FabricSpec& b = spec.base;
  const std::uint32_t half = half_radix(spec.radix);
  const std::uint32_t per_segment = spec.segment_servers == 0 ? half : spec.segment_servers;
  if (per_segment > half) {
    throw Error("segment_servers " + std::to_string(per_segment) + " exceeds the " +
                std::to_string(half) + " host ports of a rail switch (radix " +
                std::to_string(spec.radix) + ")");
  }
  const std::uint32_t rails = b.gpus_per_server;
  const std::uint32_t servers = b.gpus / rails;
  const std::uint32_t segments = ceil_div(servers, per_segment);
  const std::uint32_t leaves_per_plane = segments * rails;
  if (leaves_per_plane > spec.radix) {
    throw Error("a rail-optimized fabric of radix " + std::to_string(spec.radix) +
                " joins at most " + std::to_string(spec.radix) +
                " rail switches per plane in its spines (" + std::to_string(b.gpus) +
                " GPUs need " + std::to_string(leaves_per_plane) +
                "); use a larger radix or fewer GPUs");
  }
  const std::uint32_t planes = spec.dual_plane ? 2 : 1;
  Fabric f("rail-optimized",
           "radix=" + std::to_string(spec.radix) + " gpus=" + std::to_string(b.gpus) +
               " per_server=" + std::to_string(rails) + " segment=" + std::to_string(per_segment) +
               (spec.dual_plane ? " dual-plane" : ""),
           b.gpus, rails);
  f.add_servers(b.nvlink_rate, b.nvlink_latency);
  // Plane-major numbering keeps each plane's rail switches contiguous for routing.
  std::vector<NodeId> leaf(planes * leaves_per_plane), spine(planes * half);
  for (std::uint32_t p = 0; p < planes; ++p) {
    for (std::uint32_t l = 0; l < leaves_per_plane; ++l) {
      leaf[p * leaves_per_plane + l] = f.add_switch(1, static_cast<std::uint16_t>(p), l / rails, l);
    }
  }
  for (std::uint32_t p = 0; p < planes; ++p) {
    for (std::uint32_t s = 0; s < half; ++s) {
      spine[p * half + s] = f.add_switch(2, static_cast<std::uint16_t>(p), 0, s);
    }
  }
  for (std::uint32_t p = 0; p < planes; ++p) {
    for (GpuId g = 0; g < b.gpus; ++g) {
      const std::uint32_t segment = (g / rails) / per_segment;
      f.connect(f.gpu_node(g), leaf[p * leaves_per_plane + segment * rails + g % rails],
                b.link_rate, b.link_latency, Tier::kHost);
    }
    for (std::uint32_t l = 0; l < leaves_per_plane; ++l) {
      for (std::uint32_t s = 0; s < half; ++s) {
        f.connect(leaf[p * leaves_per_plane + l], spine[p * half + s], b.link_rate, b.link_latency,
                  Tier::kSpine);
      }
    }
  }
  f.finish();
  return f;
}

Fabric build_multi_plane(const MultiPlaneSpec& spec) {
  const FabricSpec& b = spec.base;
  const std::uint32_t half = half_radix(spec.radix);
  const std::uint32_t planes = spec.planes;
  if (planes < 1 || b.gpus_per_server % planes != 0) {
    throw Error("planes (" + std::to_string(planes) + ") must divide gpus_per_server (" +
                std::to_string(b.gpus_per_server) + ")");
  }
  const std::uint32_t r = spec.leaf_oversubscription;
  require_divides("leaf_oversubscription", r, half, spec.radix);
  const std::uint32_t per_server = b.gpus_per_server / planes;  // NICs per plane per server
  const std::uint32_t hosts = (b.gpus / b.gpus_per_server) * per_server;  // per plane
  const std::uint32_t leaves = ceil_div(hosts, half);
  if (leaves > spec.radix) {
    throw Error("a plane of radix " + std::to_string(spec.radix) + " holds at most " +
                std::to_string(spec.radix * half) + " NICs (" + std::to_string(hosts) +
                " per plane here); use a larger radix or fewer GPUs");
  }
  const std::uint32_t spines = half / r;
  Fabric f("multi-plane",
           "planes=" + std::to_string(planes) + " radix=" + std::to_string(spec.radix) + " gpus=" +
               std::to_string(b.gpus) + " per_server=" + std::to_string(b.gpus_per_server) +
               " leaf=" + std::to_string(r) + ":1",
           b.gpus, b.gpus_per_server);
  f.add_servers(b.nvlink_rate, b.nvlink_latency);
  std::vector<NodeId> leaf(planes * leaves), spine(planes * spines);
  for (std::uint32_t p = 0; p < planes; ++p) {
    for (std::uint32_t l = 0; l < leaves; ++l) {
      // Leaf l of every plane serves the same servers: one partition group.
      leaf[p * leaves + l] = f.add_switch(1, static_cast<std::uint16_t>(p), l, l);
    }
  }
  for (std::uint32_t p = 0; p < planes; ++p) {
    for (std::uint32_t s = 0; s < spines; ++s) {
      spine[p * spines + s] = f.add_switch(2, static_cast<std::uint16_t>(p), 0, s);
    }
  }
  for (GpuId g = 0; g < b.gpus; ++g) {
    const std::uint32_t local = g % b.gpus_per_server;
    const std::uint32_t plane = local % planes;
    const std::uint32_t host = (g / b.gpus_per_server) * per_server + local / planes;
    f.connect(f.gpu_node(g), leaf[plane * leaves + host / half], b.link_rate, b.link_latency,
              Tier::kHost);
  }
  for (std::uint32_t p = 0; p < planes; ++p) {
    for (std::uint32_t l = 0; l < leaves; ++l) {
      for (std::uint32_t s = 0; s < spines; ++s) {
        f.connect(leaf[p * leaves + l], spine[p * spines + s], b.link_rate, b.link_latency,
                  Tier::kSpine);
      }
    }
  }
  f.finish();
  return f;
}

}  // namespace shoal::topo
