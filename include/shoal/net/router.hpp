// Where a cell goes next: the first link of a flow at its sender, and the link
// a cell leaves a GPU (relaying, PXN), an NVSwitch or a switch on. Up/down
// routing from the fabric, ECMP by a stable hash of the flow or per-cell
// spraying, and failed links: from its failure time a link is never chosen,
// nor one whose far end cannot still reach the destination; a cell stranded
// above a failed down link detours down to another switch and up again. A
// flow with no path left is an Error.
#pragma once

#include <cstdint>
#include <vector>

#include "shoal/core/random.hpp"
#include "shoal/core/units.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::net {

/// How a switch picks among equal up links: by a stable hash of the flow
/// (ECMP), at random per cell (spraying), or per cell the one with the fewest
/// cells queued, ties at random (adaptive spraying, DRILL-like).
enum class LoadBalancing : std::uint8_t { kEcmp, kSpray, kAdaptive };

class Router {
 public:
  /// `fail_at`: by link, when it fails (kTimeInfinity: never). `queued`: by
  /// link, the cells waiting at its port (read for adaptive spraying; owned by
  /// the caller, who keeps it current).
  Router(const topo::Fabric& fabric, const work::Dag& dag, LoadBalancing balancing,
         std::vector<Time> fail_at, const std::vector<std::int32_t>& queued);

  /// The link a flow's cells leave its sender on: NVLink inside the server or
  /// towards the GPU that relays for it (PXN), else one of its NIC ports.
  topo::LinkId first_link(std::uint32_t flow, Time now) const;
  /// The link a cell of `flow`, bound for GPU `dst`, that arrived at `here`
  /// leaves on. `here` is not the destination. The caller knows `dst`: a rank
  /// may route cells of flows it does not hold (net/transit_routes.hpp).
  topo::LinkId next_link(topo::NodeId here, std::uint32_t flow, work::GpuId dst, Time now,
                         core::Rng& rng) const;

  /// Whether next_link() at `here` at `now` is a pure function of the flow
  /// and its destination (ECMP at a switch, no failure yet), so that
  /// peek_switch_link() can tell it ahead.
  bool can_peek(topo::NodeId here, Time now) const {
    return balancing_ == LoadBalancing::kEcmp && now < first_failure_ &&
           fabric_.node(here).kind == topo::NodeKind::kSwitch;
  }
  /// Where can_peek() holds, the link next_link() will return, else kNoLink:
  /// a prefetch hint, free of side effects.
  topo::LinkId peek_switch_link(topo::NodeId here, std::uint32_t flow, work::GpuId dst) const {
    const auto links = fabric_.next_links(here, dst);
    if (links.empty()) return topo::kNoLink;
    return topo::Fabric::ecmp_pick(links, here, flow_hash(flow));
  }

  /// A flow's stable hash, for ECMP: computed, not stored (a table by flow
  /// cost a cache miss per cell-hop).
  static std::uint64_t flow_hash(std::uint32_t flow) {
    return core::mix64(std::uint64_t{flow} * 0x9E37 + 1);
  }

  bool failed(topo::LinkId l, Time now) const { return now >= fail_at_[l]; }
  Time fail_at(topo::LinkId l) const { return fail_at_[l]; }

 private:
  topo::LinkId nic_port(work::GpuId g, std::uint32_t flow, work::GpuId dst, Time now) const;
  topo::LinkId switch_link(topo::NodeId here, std::uint32_t flow, work::GpuId dst, Time now,
                           core::Rng& rng) const;
  /// Whether a cell at switch `at` can still reach GPU `dst` at `now`.
  bool reaches(topo::NodeId at, work::GpuId dst, Time now) const;
  /// Or after going down first (to switches only): where a stranded cell can detour.
  bool reaches_by_detour(topo::NodeId at, work::GpuId dst, Time now) const;
  /// Spraying among `n` usable links (n > 1).
  topo::LinkId spray(const topo::LinkId* links, std::size_t n, core::Rng& rng) const;
  [[noreturn]] void no_path(std::uint32_t flow, work::GpuId dst, topo::NodeId here, Time now) const;

  const topo::Fabric& fabric_;
  const work::Dag& dag_;
  LoadBalancing balancing_;
  std::vector<Time> fail_at_;
  const std::vector<std::int32_t>& queued_;
  Time first_failure_ = kTimeInfinity;
};

}  // namespace shoal::net
