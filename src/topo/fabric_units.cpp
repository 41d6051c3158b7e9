#include "shoal/topo/fabric_units.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "shoal/core/error.hpp"

namespace shoal::topo {
namespace {

/// Units of single servers need a server for every rank.
void require_a_server_per_rank(const Fabric& fabric, int ranks, const char* strategy) {
  const std::uint32_t servers = fabric.server_count();
  if (servers < static_cast<std::uint32_t>(ranks)) {
    throw Error(std::string("partition strategy ") + strategy + ": " + std::to_string(servers) +
                " servers cannot fill " + std::to_string(ranks) + " ranks; use fewer ranks");
  }
}

}  // namespace

FabricUnits fabric_units(const Fabric& fabric, int ranks) {
  bool has_core = false;
  for (NodeId v = 0; v < fabric.node_count(); ++v) {
    has_core = has_core || (fabric.node(v).kind == NodeKind::kSwitch && fabric.node(v).level == 3);
  }
  // A leaf's group is its own number in a 2-tier fat tree, its pod in 3 tiers,
  // its segment in a rail-optimized fabric (the builders set it so).
  auto group_of_switch = [&](const Node& n) -> std::int64_t {
    if (n.level == 1) return n.group;
    if (n.level == 2 && has_core) return n.group;
    return -1;
  };
  std::int64_t groups = 0;
  // Counted over the switches: a server may span leaves, so some hold no server's first GPU.
  for (NodeId v = 0; v < fabric.node_count(); ++v) {
    if (fabric.node(v).kind == NodeKind::kSwitch) {
      groups = std::max(groups, group_of_switch(fabric.node(v)) + 1);
    }
  }
  const std::uint32_t servers = fabric.server_count();
  const bool by_server = groups < ranks;
  if (by_server) require_a_server_per_rank(fabric, ranks, "topology");
  FabricUnits units;
  units.count = by_server ? servers : groups;
  units.server_unit.resize(servers);
  for (std::uint32_t s = 0; s < servers; ++s) {
    const GpuId first = s * fabric.gpus_per_server();
    const Node& leaf = fabric.node(fabric.link(fabric.nic_links(first).front()).to);
    units.server_unit[s] = by_server ? s : group_of_switch(leaf);
  }
  units.switch_unit.assign(fabric.node_count(), -1);
  for (NodeId v = 0; v < fabric.node_count(); ++v) {
    const Node& n = fabric.node(v);
    if (n.kind == NodeKind::kSwitch && !by_server) units.switch_unit[v] = group_of_switch(n);
  }
  return units;
}

FabricUnits nic_units(const Fabric& fabric, int ranks) {
  require_a_server_per_rank(fabric, ranks, "weighted");
  const std::uint32_t servers = fabric.server_count();
  // Servers and switches as one set of items (server s, then node v at
  // servers + v), joined along every NIC link.
  std::vector<std::uint32_t> parent(std::size_t{servers} + fabric.node_count());
  std::iota(parent.begin(), parent.end(), 0u);
  auto root = [&](std::uint32_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const std::uint32_t per_server = fabric.gpus_per_server();
  for (GpuId g = 0; g < fabric.gpu_count(); ++g) {
    for (const LinkId l : fabric.nic_links(g)) {
      const NodeId to = fabric.link(l).to;
      if (fabric.node(to).kind != NodeKind::kSwitch) continue;
      const std::uint32_t a = root(g / per_server);
      const std::uint32_t b = root(servers + to);
      parent[std::max(a, b)] = std::min(a, b);  // a server's set is named by its first server
    }
  }
  FabricUnits units;
  units.server_unit.resize(servers);
  units.switch_unit.assign(fabric.node_count(), -1);
  std::vector<std::int64_t> unit_of_root(parent.size(), -1);
  for (std::uint32_t s = 0; s < servers; ++s) {
    std::int64_t& unit = unit_of_root[root(s)];
    if (unit < 0) unit = units.count++;
    units.server_unit[s] = unit;
  }
  if (units.count >= ranks) {
    for (NodeId v = 0; v < fabric.node_count(); ++v) {
      if (fabric.node(v).kind == NodeKind::kSwitch) {
        units.switch_unit[v] = unit_of_root[root(servers + v)];  // -1: no NIC reaches it
      }
    }
    return units;
  }
  // Too few to fill the ranks: each server, then each NIC switch as GPUs reach it.
  units.count = servers;
  for (std::uint32_t s = 0; s < servers; ++s) units.server_unit[s] = s;
  for (GpuId g = 0; g < fabric.gpu_count(); ++g) {
    for (const LinkId l : fabric.nic_links(g)) {
      const NodeId to = fabric.link(l).to;
      if (fabric.node(to).kind == NodeKind::kSwitch && units.switch_unit[to] < 0) {
        units.switch_unit[to] = units.count++;
      }
    }
  }
  return units;
}

core::Partition place_units(const Fabric& fabric, const FabricUnits& units, int ranks,
                            const std::vector<std::int32_t>& unit_rank, std::string description) {
  const core::Layout& layout = fabric.layout();
  std::vector<std::int32_t> atom_rank;
  atom_rank.reserve(layout.atom_count());
  for (const std::int64_t unit : units.server_unit) {
    atom_rank.push_back(unit_rank[static_cast<std::size_t>(unit)]);
  }
  std::int32_t next_spread = 0;
  for (NodeId v = 0; v < fabric.node_count(); ++v) {
    if (fabric.node(v).kind != NodeKind::kSwitch) continue;
    const std::int64_t unit = units.switch_unit[v];
    if (unit >= 0) {
      atom_rank.push_back(unit_rank[static_cast<std::size_t>(unit)]);
    } else {
      atom_rank.push_back(next_spread);
      next_spread = (next_spread + 1) % ranks;
    }
  }
  return core::Partition::from_atom_ranks(layout, ranks, std::move(atom_rank),
                                          std::move(description));
}

}  // namespace shoal::topo
