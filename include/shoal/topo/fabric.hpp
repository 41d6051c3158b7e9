// One graph type for every fabric: GPUs (each with its NIC), an NVSwitch per
// server, network switches in tiers, and directed links with rate and latency.
//
// Node ids are the engine's entity ids. They are laid out so that a server (its
// GPUs, then its NVSwitch) is a contiguous range — an atom that no partition
// splits, since NVLink latency is too small to serve as lookahead — and each
// network switch follows as an atom of its own.
//
// Routing is up/down. A packet for GPU d travels on the plane of the NIC port it
// left on: at a switch it goes down if d's leaf on that plane is below it, else up. The down choice
// is a small range table per switch (leaves below each down link); up links
// are all equal, so ECMP picks one by a stable hash of the flow, or spraying
// picks one per cell.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shoal/core/layout.hpp"
#include "shoal/core/random.hpp"
#include "shoal/core/units.hpp"
#include "shoal/topo/ids.hpp"

namespace shoal::topo {

enum class NodeKind : std::uint8_t { kGpu, kNvSwitch, kSwitch };

/// Link tiers, counted from the hosts: NVLink inside a server, host to leaf,
/// leaf to spine (or aggregation), aggregation to core.
enum class Tier : std::uint8_t { kNvlink = 0, kHost = 1, kSpine = 2, kCore = 3 };
std::string_view tier_name(Tier t);

struct Node {
  NodeKind kind = NodeKind::kGpu;
  std::uint8_t level = 0;   // 0 GPU/NVSwitch, 1 leaf, 2 spine/aggregation, 3 core
  std::uint16_t plane = 0;  // multi-plane fabrics; 0 otherwise
  std::uint32_t group = 0;  // server of a GPU or NVSwitch; a leaf's partition group (itself
                            // in 2 tiers, its pod in 3, its segment in rail fabrics); pod of
                            // an aggregation switch
  std::uint32_t index = 0;  // GPU id; switch index within its level
};

struct Link {
  NodeId from = 0;
  NodeId to = 0;
  BitsPerSecond rate = 0;
  Time latency = 0;
  Tier tier = Tier::kHost;
  bool up = true;  // towards the core (GPU -> leaf, leaf -> spine, ...)
  LinkId reverse = kNoLink;
};

class Fabric {
 public:
  // --- construction (builders) ---
  Fabric(std::string kind, std::string description, GpuId gpus, std::uint32_t gpus_per_server);
  /// Adds the servers: for each, its GPUs then its NVSwitch, with NVLink both ways.
  void add_servers(BitsPerSecond nvlink_rate, Time nvlink_latency);
  NodeId add_switch(std::uint8_t level, std::uint16_t plane, std::uint32_t group,
                    std::uint32_t index);
  /// A duplex link: `lower` is the node nearer the hosts. Returns the upward link.
  LinkId connect(NodeId lower, NodeId upper, BitsPerSecond rate, Time latency, Tier tier);
  /// Computes adjacency, routing tables and the engine layout. Call once, last.
  void finish();

  // --- the graph ---
  const std::string& kind() const { return kind_; }
  const std::string& description() const { return description_; }
  GpuId gpu_count() const { return gpus_; }
  std::uint32_t gpus_per_server() const { return gpus_per_server_; }
  std::uint32_t server_count() const { return gpus_ / gpus_per_server_; }
  std::size_t node_count() const { return nodes_.size(); }
  const Node& node(NodeId n) const { return nodes_[n]; }
  const Link& link(LinkId l) const { return links_[l]; }
  std::size_t link_count() const { return links_.size(); }
  std::span<const LinkId> out_links(NodeId n) const {
    return std::span<const LinkId>(out_).subspan(out_begin_[n], out_begin_[n + 1] - out_begin_[n]);
  }
  NodeId gpu_node(GpuId g) const {
    return (g / gpus_per_server_) * (gpus_per_server_ + 1) + g % gpus_per_server_;
  }
  NodeId nvswitch_node(std::uint32_t server) const {
    return server * (gpus_per_server_ + 1) + gpus_per_server_;
  }
  /// "gpu 12", "nvswitch 1", "leaf 3", "spine 0", "core 7" (as `shoal topo` and
  /// perturbations name them).
  std::string node_name(NodeId n) const;
  /// The node of that name; an Error lists the forms otherwise.
  NodeId find_node(std::string_view name) const;
  /// The directed link from -> to; kNoLink if there is none.
  LinkId find_link(NodeId from, NodeId to) const;
  /// The engine's view: atoms (servers, then one per switch) and cut-able links.
  const core::Layout& layout() const { return layout_; }

  // --- routing ---
  /// The network links a GPU's NIC sends on (one per plane or port).
  std::span<const LinkId> nic_links(GpuId g) const { return out_links(gpu_node(g)).subspan(1); }
  /// Planes: independent sets of switches (dual-plane NICs, multi-plane fabrics).
  std::uint32_t plane_count() const { return planes_; }
  /// Whether GPU g has a NIC port on `plane`.
  bool reachable_on(std::uint32_t plane, GpuId g) const {
    return gpu_leaf_[std::size_t{plane} * gpus_ + g] != UINT32_MAX;
  }
  /// Links out of `at` that lead towards GPU `dst` on a shortest up/down path
  /// through the network: the down link(s) when dst's leaf is below, else every
  /// up link. `at` is a switch.
  std::span<const LinkId> next_links(NodeId at, GpuId dst) const;
  /// Stable ECMP choice among next_links by the flow's hash.
  LinkId ecmp_link(NodeId at, GpuId dst, std::uint64_t flow_hash) const;
  /// The same choice among `links` = next_links(at, dst), not empty: for a
  /// caller that has looked them up already (the per-cell path).
  static LinkId ecmp_pick(std::span<const LinkId> links, NodeId at, std::uint64_t flow_hash) {
    if (links.size() == 1) return links.front();
    // Mixed with the switch id, so consecutive switches do not repeat one choice.
    const std::uint64_t h = core::mix64(flow_hash ^ (std::uint64_t{at} << 32));
    const std::size_t n = links.size();
    // The same pick as h % n; a mask where n is a power of two (a fat tree's up
    // links), since a 64-bit division per cell-hop showed in the profile.
    return links[(n & (n - 1)) == 0 ? h & (n - 1) : h % n];
  }
  /// Whether one of src's NIC ports is on a plane that reaches dst.
  bool shares_plane(GpuId src, GpuId dst) const;
  /// For GPUs on different planes (multi-plane fabrics): the GPU of src's server
  /// that forwards for it over NVLink (PXN), the first with a port reaching dst.
  GpuId relay_for(GpuId src, GpuId dst) const;
  /// Propagation latency of the up/down path between two GPUs (no queueing).
  Time path_latency(GpuId src, GpuId dst) const;
  /// The most links an up/down route crosses, where no link has failed: up
  /// to the top tier and down (two links a switch tier), plus two NVLink
  /// links to a relay GPU on a multi-plane fabric (PXN); at least the two of
  /// NVLink inside a server.
  std::uint32_t longest_route() const;

 private:
  struct DownRange {  // leaves [first_leaf, end_leaf) below the down links [first, first+count)
    std::uint32_t first_leaf, end_leaf;
    std::uint32_t first, count;  // into down_links_
  };

  std::string kind_;
  std::string description_;
  GpuId gpus_;
  std::uint32_t gpus_per_server_;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<std::uint32_t> out_begin_;  // CSR over out_
  std::vector<LinkId> out_;
  // Routing: each GPU's NIC port -> its leaf (one per plane), leaves numbered densely.
  std::vector<std::uint32_t> leaf_number_;  // by node; UINT32_MAX if not a leaf
  std::uint32_t planes_ = 1;
  std::vector<std::uint32_t> gpu_leaf_;  // by plane * gpus + GPU: its leaf there, dense number
  std::vector<LinkId> leaf_to_gpu_;      // by plane * gpus + GPU: that leaf's link down to it
  std::vector<GpuId> server_plane_gpu_;  // by server * planes + plane: its first GPU there
  static constexpr std::uint8_t kNoShift = 0xFF;
  /// By node, everything next_links reads about it in one cache line (it runs
  /// for every cell-hop at a switch; five arrays by node were five lines): its
  /// leaf number, its plane's row of gpu_leaf_, the leaves below it and its
  /// down ranges, so that a route down is found without a search (every fat
  /// tree's ranges are alike: one width, as many links each) and a route up with
  /// one compare.
  struct alignas(64) Route {
    std::uint32_t leaf = UINT32_MAX;             // its dense leaf number; UINT32_MAX if not a leaf
    std::uint32_t plane_row = 0;                 // plane * gpus: its plane's slots in gpu_leaf_
    std::uint32_t first_leaf = 0, end_leaf = 0;  // the union of its ranges' leaves
    std::uint32_t first_range = 0;               // into down_ranges_, in leaf order
    std::uint32_t width = 0;                     // leaves per range where all are alike, else 0
    std::uint8_t width_shift = kNoShift;         // log2(width) where a power of two
    std::uint32_t down_count = 0;  // where the ranges are alike in links too: links per range
    std::uint32_t first_down = 0;  // ... and where the first range's links begin in down_links_
    std::uint32_t up_first = 0;    // into up_links_
    std::uint32_t up_count = 0;
  };
  static_assert(sizeof(Route) == 64);
  std::vector<Route> routes_;
  std::vector<DownRange> down_ranges_;
  std::vector<LinkId> down_links_;
  std::vector<LinkId> up_links_;
  core::Layout layout_{"empty", {1}, {"none"}};
  bool finished_ = false;
};

}  // namespace shoal::topo
