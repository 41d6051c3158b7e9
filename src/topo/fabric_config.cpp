#include "shoal/topo/fabric_config.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>

#include "shoal/core/error.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_units.hpp"

namespace shoal::topo {

std::uint32_t parse_oversubscription(std::string_view text) {
  const auto colon = text.find(':');
  std::uint32_t ratio = 0;
  const bool ok =
      colon != std::string_view::npos && text.substr(colon + 1) == "1" &&
      std::from_chars(text.data(), text.data() + colon, ratio).ptr == text.data() + colon &&
      colon > 0 && ratio >= 1;
  if (!ok) {
    throw Error("invalid oversubscription \"" + std::string(text) +
                "\" (write it as \"R:1\" with a whole R >= 1, e.g. \"1:1\" or \"4:1\")");
  }
  return ratio;
}

Fabric build_fabric(config::ConfigFile& config) {
  constexpr std::string_view t = "topology";
  const std::string where = "config " + config.path() + ": topology.";
  auto count = [&](std::string_view key, std::int64_t fallback, std::int64_t max) {
    const std::int64_t v = config.integer(t, key).value_or(fallback);
    if (v < 1 || v > max) {
      throw Error(where + std::string(key) + " must be between 1 and " + std::to_string(max));
    }
    return static_cast<std::uint32_t>(v);
  };
  const std::string kind = config.string(t, "kind").value_or("");
  FabricSpec base;
  base.gpus = count("gpus", 0 + base.gpus, 1 << 20);
  base.gpus_per_server = count("gpus_per_server", base.gpus_per_server, 64);
  base.link_rate = config.rate(t, "link_rate").value_or(base.link_rate);
  base.link_latency = config.time(t, "link_latency").value_or(base.link_latency);
  base.nvlink_rate = config.rate(t, "nvlink_rate").value_or(base.nvlink_rate);
  base.nvlink_latency = config.time(t, "nvlink_latency").value_or(base.nvlink_latency);
  if (base.link_latency <= 0)
    throw Error(where + "link_latency must be positive (it is the lookahead)");
  auto with_context = [&](auto build) {
    try {
      return build();
    } catch (const Error& e) {
      throw Error("config " + config.path() + ": [topology]: " + e.what());
    }
  };
  if (kind == "single-switch") {
    config.reject_unknown(t);
    return with_context([&] { return build_single_switch(base); });
  }
  if (kind == "fat-tree") {
    FatTreeSpec spec;
    spec.base = base;
    spec.tiers = static_cast<int>(count("tiers", spec.tiers, 3));
    spec.radix = count("radix", spec.radix, 4096);
    auto ratio = [&](std::string_view key) {
      const auto text = config.string(t, key);
      if (!text) return std::uint32_t{1};
      try {
        return parse_oversubscription(*text);
      } catch (const Error& e) {
        throw Error(where + std::string(key) + ": " + e.what());
      }
    };
    spec.leaf_oversubscription = ratio("leaf_oversubscription");
    spec.aggregation_oversubscription = ratio("aggregation_oversubscription");
    config.reject_unknown(t);
    return with_context([&] { return build_fat_tree(spec); });
  }
  if (kind == "rail-optimized" || kind == "multi-rail") {
    RailSpec spec;
    spec.base = base;
    spec.radix = count("radix", spec.radix, 4096);
    const std::int64_t segment = config.integer(t, "segment_servers").value_or(0);
    if (segment < 0 || segment > 4096) {
      throw Error(where + "segment_servers must be between 0 (radix/2) and 4096");
    }
    spec.segment_servers = static_cast<std::uint32_t>(segment);
    spec.dual_plane = config.boolean(t, "dual_plane").value_or(false);
    config.reject_unknown(t);
    return with_context([&] { return build_rail_optimized(spec); });
  }
  if (kind == "multi-plane") {
    MultiPlaneSpec spec;
    spec.base = base;
    spec.planes = count("planes", spec.planes, 64);
    spec.radix = count("radix", spec.radix, 4096);
    if (const auto text = config.string(t, "leaf_oversubscription")) {
      try {
        spec.leaf_oversubscription = parse_oversubscription(*text);
      } catch (const Error& e) {
        throw Error(where + "leaf_oversubscription: " + e.what());
      }
    }
    config.reject_unknown(t);
    return with_context([&] { return build_multi_plane(spec); });
  }
  throw Error(where + "kind " +
              (kind.empty() ? std::string("is missing") : "\"" + kind + "\" is unknown") +
              " (use single-switch, fat-tree, rail-optimized or multi-plane)");
}

bool is_partition_strategy(std::string_view name) {
  return name == "topology" || name == "block" || name == "round-robin" || name == "weighted";
}

core::Partition partition_fabric(const Fabric& fabric, int ranks, std::string_view strategy) {
  const core::Layout& layout = fabric.layout();
  if (!is_partition_strategy(strategy)) {
    throw Error("unknown partition strategy \"" + std::string(strategy) +
                "\" (use topology, weighted, block or round-robin)");
  }
  if (strategy == "weighted") {
    throw Error(
        "partition strategy weighted balances a workload: it needs a run config's "
        "workload (shoal run, or shoal partition fabric CONFIG --strategy weighted)");
  }
  if (strategy != "topology") {
    return core::Partition::from_strategy(layout, ranks, core::parse_strategy(strategy));
  }
  const FabricUnits units = fabric_units(fabric, ranks);
  // Units in contiguous blocks balanced by their GPUs: the engine's block strategy
  // over a layout whose atoms are the units.
  std::vector<core::EntityId> weight(static_cast<std::size_t>(units.count), 0);
  for (const std::int64_t unit : units.server_unit) {
    weight[static_cast<std::size_t>(unit)] += fabric.gpus_per_server();
  }
  for (auto& w : weight) w = std::max<core::EntityId>(w, 1);  // a unit of switches only
  const core::Layout units_layout("units", weight,
                                  std::vector<std::string>(weight.size(), std::string("unit")));
  const core::Partition unit_partition =
      core::Partition::from_strategy(units_layout, ranks, core::Strategy::kBlock);
  std::vector<std::int32_t> unit_rank(weight.size());
  for (std::size_t u = 0; u < unit_rank.size(); ++u) {
    unit_rank[u] = unit_partition.rank_of_atom(static_cast<core::AtomId>(u));
  }
  return place_units(fabric, units, ranks, unit_rank, "topology");
}

FabricSummary summarize(const Fabric& fabric) {
  FabricSummary s;
  s.gpus = fabric.gpu_count();
  s.servers = fabric.server_count();
  constexpr const char* kLevelNames[] = {"", "leaf", "spine", "core"};
  for (std::uint8_t level = 1; level <= 3; ++level) {
    LevelSummary l;
    l.name = kLevelNames[level];
    double down_capacity = 0, up_capacity = 0;
    for (NodeId v = 0; v < fabric.node_count(); ++v) {
      const Node& n = fabric.node(v);
      if (n.kind != NodeKind::kSwitch || n.level != level) continue;
      ++l.switches;
      std::uint32_t down = 0, up = 0;
      for (const LinkId id : fabric.out_links(v)) {
        const Link& link = fabric.link(id);
        (link.up ? up : down) += 1;
        (link.up ? up_capacity : down_capacity) += static_cast<double>(link.rate);
      }
      l.down_ports = std::max(l.down_ports, down);
      l.up_ports = std::max(l.up_ports, up);
    }
    if (l.switches == 0) continue;
    l.oversubscription = up_capacity > 0 ? down_capacity / up_capacity : 0;
    s.levels.push_back(l);
  }
  std::map<Tier, std::pair<std::uint32_t, double>> tiers;  // duplex links, up capacity
  for (LinkId id = 0; id < fabric.link_count(); ++id) {
    const Link& link = fabric.link(id);
    if (!link.up) continue;
    auto& [links, capacity] = tiers[link.tier];
    ++links;
    capacity += static_cast<double>(link.rate);
  }
  double thinnest = -1;
  for (const auto& [tier, entry] : tiers) {
    s.links_per_tier.push_back({std::string(tier_name(tier)), entry.first});
    if (tier != Tier::kNvlink && (thinnest < 0 || entry.second < thinnest)) thinnest = entry.second;
  }
  s.bisection = static_cast<BitsPerSecond>(thinnest / 2);
  return s;
}

core::Partition fabric_partition(const Fabric& fabric, int ranks, const std::string& spec,
                                 const std::string& file) {
  if (is_partition_strategy(spec)) {
    return partition_fabric(fabric, ranks, spec);
  }
  if (!std::filesystem::is_regular_file(file)) {
    throw Error("\"" + spec +
                "\" is neither a partition strategy (topology, weighted, block, round-robin) nor a "
                "partition file (" +
                file + (std::filesystem::exists(file) ? " is not a file)" : " does not exist)"));
  }
  return core::Partition::from_file(file, fabric.layout(), ranks);
}

}  // namespace shoal::topo
