#include "shoal/topo/fabric.hpp"

#include <algorithm>
#include <bit>

#include "shoal/core/error.hpp"
#include "shoal/core/random.hpp"

namespace shoal::topo {

std::string_view tier_name(Tier t) {
  switch (t) {
    case Tier::kNvlink:
      return "nvlink";
    case Tier::kHost:
      return "host-leaf";
    case Tier::kSpine:
      return "leaf-spine";
    case Tier::kCore:
      return "spine-core";
  }
  return "?";
}

namespace {
std::string_view level_name(const Node& n) {
  switch (n.level) {
    case 1:
      return "leaf";
    case 2:
      return "spine";
    default:
      return "core";
  }
}
}  // namespace

Fabric::Fabric(std::string kind, std::string description, GpuId gpus, std::uint32_t gpus_per_server)
    : kind_(std::move(kind)),
      description_(std::move(description)),
      gpus_(gpus),
      gpus_per_server_(gpus_per_server) {
  if (gpus_per_server == 0) throw Error("gpus_per_server must be at least 1");
  if (gpus == 0 || gpus % gpus_per_server != 0) {
    throw Error("gpus (" + std::to_string(gpus) +
                ") must be a positive multiple of gpus_per_server (" +
                std::to_string(gpus_per_server) + ")");
  }
}

void Fabric::add_servers(BitsPerSecond nvlink_rate, Time nvlink_latency) {
  for (std::uint32_t s = 0; s < server_count(); ++s) {
    for (std::uint32_t i = 0; i < gpus_per_server_; ++i) {
      nodes_.push_back({NodeKind::kGpu, 0, 0, s, s * gpus_per_server_ + i});
    }
    nodes_.push_back({NodeKind::kNvSwitch, 0, 0, s, s});
  }
  for (GpuId g = 0; g < gpus_; ++g) {
    connect(gpu_node(g), nvswitch_node(g / gpus_per_server_), nvlink_rate, nvlink_latency,
            Tier::kNvlink);
  }
}

NodeId Fabric::add_switch(std::uint8_t level, std::uint16_t plane, std::uint32_t group,
                          std::uint32_t index) {
  nodes_.push_back({NodeKind::kSwitch, level, plane, group, index});
  return static_cast<NodeId>(nodes_.size() - 1);
}

LinkId Fabric::connect(NodeId lower, NodeId upper, BitsPerSecond rate, Time latency, Tier tier) {
  const auto up = static_cast<LinkId>(links_.size());
  links_.push_back({lower, upper, rate, latency, tier, true, up + 1});
  links_.push_back({upper, lower, rate, latency, tier, false, up});
  return up;
}

void Fabric::finish() {
  if (finished_) throw Error("internal: Fabric::finish called twice");
  finished_ = true;
  const std::size_t n = nodes_.size();
  // Adjacency in insertion order (a GPU's NVLink first, then its network ports).
  out_begin_.assign(n + 1, 0);
  for (const Link& l : links_) ++out_begin_[l.from + 1];
  for (std::size_t i = 0; i < n; ++i) out_begin_[i + 1] += out_begin_[i];
  out_.resize(links_.size());
  std::vector<std::uint32_t> fill(out_begin_.begin(), out_begin_.end() - 1);
  for (LinkId l = 0; l < links_.size(); ++l) out_[fill[links_[l].from]++] = l;

  // Leaves in node order, and each GPU's leaf (its first network port's switch).
  leaf_number_.assign(n, UINT32_MAX);
  std::uint32_t leaves = 0;
  for (NodeId v = 0; v < n; ++v) {
    if (nodes_[v].kind == NodeKind::kSwitch && nodes_[v].level == 1) leaf_number_[v] = leaves++;
  }
  planes_ = 1;
  for (const Node& node : nodes_) planes_ = std::max<std::uint32_t>(planes_, node.plane + 1u);
  gpu_leaf_.assign(std::size_t{planes_} * gpus_, UINT32_MAX);
  leaf_to_gpu_.assign(std::size_t{planes_} * gpus_, kNoLink);
  for (GpuId g = 0; g < gpus_; ++g) {
    const auto ports = nic_links(g);
    if (ports.empty()) throw Error("internal: GPU " + std::to_string(g) + " has no network port");
    for (const LinkId id : ports) {
      const Link& port = links_[id];
      const std::size_t slot = std::size_t{nodes_[port.to].plane} * gpus_ + g;
      if (gpu_leaf_[slot] != UINT32_MAX) {
        throw Error("internal: GPU " + std::to_string(g) + " has two ports on one plane");
      }
      gpu_leaf_[slot] = leaf_number_[port.to];
      leaf_to_gpu_[slot] = port.reverse;
    }
  }
  // For PXN: the first GPU of each server with a port on each plane.
  server_plane_gpu_.assign(std::size_t{server_count()} * planes_, UINT32_MAX);
  for (GpuId g = gpus_; g-- > 0;) {
    for (const LinkId id : nic_links(g)) {
      server_plane_gpu_[std::size_t{g / gpus_per_server_} * planes_ + nodes_[links_[id].to].plane] =
          g;
    }
  }

  // Leaves below each switch, as one contiguous range (checked), bottom-up.
  std::vector<std::uint32_t> lo(n, UINT32_MAX), hi(n, 0);
  for (NodeId v = 0; v < n; ++v) {
    if (leaf_number_[v] != UINT32_MAX) {
      lo[v] = leaf_number_[v];
      hi[v] = leaf_number_[v] + 1;
    }
  }
  for (std::uint8_t level = 2; level <= 3; ++level) {
    for (NodeId v = 0; v < n; ++v) {
      if (nodes_[v].kind != NodeKind::kSwitch || nodes_[v].level != level) continue;
      std::vector<std::pair<std::uint32_t, std::uint32_t>> children;
      for (const LinkId l : out_links(v)) {
        if (!links_[l].up) children.push_back({lo[links_[l].to], hi[links_[l].to]});
      }
      // Children's ranges may repeat (parallel links) but must tile one range, or
      // a leaf inside [lo, hi) would be routed down to a switch that cannot reach it.
      std::sort(children.begin(), children.end());
      children.erase(std::unique(children.begin(), children.end()), children.end());
      for (std::size_t c = 0; c < children.size(); ++c) {
        if (c > 0 && children[c].first != children[c - 1].second) {
          throw Error("internal: the leaves below switch " + std::to_string(v) +
                      " are not one contiguous range; up/down routing needs that");
        }
        lo[v] = std::min(lo[v], children[c].first);
        hi[v] = std::max(hi[v], children[c].second);
      }
    }
  }
  routes_.assign(n, Route{});
  if (std::size_t{planes_} * gpus_ > UINT32_MAX) {
    throw Error("internal: " + std::to_string(planes_) + " planes of " + std::to_string(gpus_) +
                " GPUs overflow the routing table's 32-bit rows");
  }
  for (NodeId v = 0; v < n; ++v) {
    Route& route = routes_[v];
    route.leaf = leaf_number_[v];
    route.plane_row = static_cast<std::uint32_t>(std::size_t{nodes_[v].plane} * gpus_);
    route.first_range = static_cast<std::uint32_t>(down_ranges_.size());
    route.up_first = static_cast<std::uint32_t>(up_links_.size());
    if (nodes_[v].kind != NodeKind::kSwitch) continue;
    std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, LinkId>> downs;
    for (const LinkId l : out_links(v)) {
      if (links_[l].up) {
        up_links_.push_back(l);
      } else if (nodes_[links_[l].to].kind == NodeKind::kSwitch) {
        const NodeId child = links_[l].to;
        downs.push_back({{lo[child], hi[child]}, l});
      }
    }
    std::sort(downs.begin(), downs.end());
    for (std::size_t i = 0; i < downs.size();) {
      std::size_t j = i;
      while (j < downs.size() && downs[j].first == downs[i].first) ++j;
      // next_links finds a range by the leaf: they must tile one range.
      if (i > 0 && downs[i].first.first != downs[i - 1].first.second) {
        throw Error("internal: the leaf ranges below switch " + std::to_string(v) +
                    " overlap or leave a gap; up/down routing needs them to tile one range");
      }
      down_ranges_.push_back({downs[i].first.first, downs[i].first.second,
                              static_cast<std::uint32_t>(down_links_.size()),
                              static_cast<std::uint32_t>(j - i)});
      for (std::size_t k = i; k < j; ++k) down_links_.push_back(downs[k].second);
      i = j;
    }
    route.up_count = static_cast<std::uint32_t>(up_links_.size()) - route.up_first;
    const auto ranges = std::span<const DownRange>(down_ranges_).subspan(route.first_range);
    if (ranges.empty()) continue;
    route.first_leaf = ranges.front().first_leaf;
    route.end_leaf = ranges.back().end_leaf;
    const std::uint32_t width = ranges.front().end_leaf - ranges.front().first_leaf;
    const std::uint32_t count = ranges.front().count;
    const bool alike = std::all_of(ranges.begin(), ranges.end(), [width](const DownRange& d) {
      return d.end_leaf - d.first_leaf == width;
    });
    route.width = alike ? width : 0;
    if (alike && std::has_single_bit(width)) {
      route.width_shift = static_cast<std::uint8_t>(std::countr_zero(width));
    }
    // Ranges are laid out in down_links_ one after another, in leaf order.
    if (alike && std::all_of(ranges.begin(), ranges.end(),
                             [count](const DownRange& d) { return d.count == count; })) {
      route.down_count = count;
      route.first_down = ranges.front().first;
    }
  }

  // The engine's atoms: each server (GPUs + NVSwitch), then each switch.
  std::vector<core::EntityId> sizes;
  std::vector<std::string> names;
  for (std::uint32_t s = 0; s < server_count(); ++s) {
    sizes.push_back(gpus_per_server_ + 1);
    names.push_back("server " + std::to_string(s));
  }
  std::vector<core::AtomId> atom_of_node(n);
  for (NodeId v = 0; v < n; ++v) {
    const Node& node = nodes_[v];
    if (node.kind != NodeKind::kSwitch) {
      atom_of_node[v] = node.group;
      continue;
    }
    atom_of_node[v] = static_cast<core::AtomId>(sizes.size());
    sizes.push_back(1);
    names.push_back(node_name(v));
  }
  layout_ = core::Layout(kind_ + " " + description_, sizes, std::move(names));
  for (const Link& l : links_) {
    const core::AtomId a = atom_of_node[l.from];
    const core::AtomId b = atom_of_node[l.to];
    if (a != b) layout_.add_link(a, b, l.latency);
  }
}

std::string Fabric::node_name(NodeId n) const {
  const Node& node = nodes_[n];
  std::string name;
  switch (node.kind) {
    case NodeKind::kGpu:
      return "gpu " + std::to_string(node.index);
    case NodeKind::kNvSwitch:
      return "nvswitch " + std::to_string(node.index);
    case NodeKind::kSwitch:
      name = std::string(level_name(node)) + " " + std::to_string(node.index);
      break;
  }
  return node.plane > 0 ? "plane " + std::to_string(node.plane) + " " + name : name;
}

NodeId Fabric::find_node(std::string_view name) const {
  for (NodeId v = 0; v < nodes_.size(); ++v) {
    if (node_name(v) == name) return v;
  }
  throw Error("no node \"" + std::string(name) +
              "\" in this fabric (names: gpu N, nvswitch N, leaf N, spine N, core N)");
}

LinkId Fabric::find_link(NodeId from, NodeId to) const {
  for (const LinkId l : out_links(from)) {
    if (links_[l].to == to) return l;
  }
  return kNoLink;
}

std::span<const LinkId> Fabric::next_links(NodeId at, GpuId dst) const {
  const Route& route = routes_[at];
  const std::size_t slot = std::size_t{route.plane_row} + dst;
  const std::uint32_t leaf = gpu_leaf_[slot];
  if (leaf == UINT32_MAX) return {};  // dst has no port on this switch's plane
  if (route.leaf == leaf) return {&leaf_to_gpu_[slot], 1};
  if (leaf >= route.first_leaf && leaf < route.end_leaf) {
    const std::uint32_t offset = leaf - route.first_leaf;
    if (route.down_count != 0 && route.width_shift != kNoShift) {  // a fat tree's: no division
      return {down_links_.data() + route.first_down +
                  std::size_t{offset >> route.width_shift} * route.down_count,
              route.down_count};
    }
    std::uint32_t r = route.first_range;
    if (route.width != 0) {
      r += offset / route.width;
    } else {
      while (leaf >= down_ranges_[r].end_leaf) ++r;
    }
    const DownRange& d = down_ranges_[r];
    return std::span<const LinkId>(down_links_).subspan(d.first, d.count);
  }
  return {up_links_.data() + route.up_first, route.up_count};
}

LinkId Fabric::ecmp_link(NodeId at, GpuId dst, std::uint64_t flow_hash) const {
  const auto links = next_links(at, dst);
  if (links.empty()) {
    throw Error("no route from node " + std::to_string(at) + " to GPU " + std::to_string(dst));
  }
  return ecmp_pick(links, at, flow_hash);
}

bool Fabric::shares_plane(GpuId src, GpuId dst) const {
  for (const LinkId port : nic_links(src)) {
    if (reachable_on(nodes_[links_[port].to].plane, dst)) return true;
  }
  return false;
}

GpuId Fabric::relay_for(GpuId src, GpuId dst) const {
  // The first GPU of src's server with a port on any plane that reaches dst:
  // a look-up per plane, since this runs for every cell a NVSwitch relays.
  GpuId relay = UINT32_MAX;
  const std::size_t server = src / gpus_per_server_;
  for (std::uint32_t p = 0; p < planes_; ++p) {
    if (reachable_on(p, dst)) relay = std::min(relay, server_plane_gpu_[server * planes_ + p]);
  }
  if (relay != UINT32_MAX) return relay;
  throw Error("no network path from GPU " + std::to_string(src) + " to GPU " + std::to_string(dst) +
              ": no GPU of its server has a NIC on a plane that reaches it");
}

std::uint32_t Fabric::longest_route() const {
  std::uint32_t top = 0;
  for (const Node& node : nodes_) {
    if (node.kind == NodeKind::kSwitch) top = std::max<std::uint32_t>(top, node.level);
  }
  return std::max<std::uint32_t>(2, 2 * top + (planes_ > 1 ? 2 : 0));
}

Time Fabric::path_latency(GpuId src, GpuId dst) const {
  auto nvlink_hop = [&](GpuId from, GpuId to) {
    return links_[out_links(gpu_node(from)).front()].latency +
           links_[out_links(nvswitch_node(to / gpus_per_server_))[to % gpus_per_server_]].latency;
  };
  if (src / gpus_per_server_ == dst / gpus_per_server_) return nvlink_hop(src, dst);
  if (!shares_plane(src, dst)) {
    const GpuId relay = relay_for(src, dst);  // PXN: over NVLink to a GPU on dst's plane
    return nvlink_hop(src, relay) + path_latency(relay, dst);
  }
  LinkId first = kNoLink;
  for (const LinkId port : nic_links(src)) {
    if (reachable_on(nodes_[links_[port].to].plane, dst)) {
      first = port;
      break;
    }
  }
  Time total = links_[first].latency;
  NodeId at = links_[first].to;
  const NodeId target = gpu_node(dst);
  for (int hops = 0; at != target; ++hops) {
    if (hops > 16) throw Error("internal: routing loop towards GPU " + std::to_string(dst));
    const LinkId l = ecmp_link(at, dst, 0);
    total += links_[l].latency;
    at = links_[l].to;
  }
  return total;
}

}  // namespace shoal::topo
