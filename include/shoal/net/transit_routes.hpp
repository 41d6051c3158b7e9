// The destinations of the cells a rank carries for flows it does not hold. A
// rank holds only the flows its GPUs send or receive (exec/fragment.hpp), yet
// its switches also carry other ranks' cells: a spine between two leaves of
// other ranks, say. Such a cell came from another rank, and its destination
// came with it in a note (Network::take_arrival). The route is kept while any
// of the flow's cells is on this rank, so the table holds the flows in
// transit, not every flow of the job.
#pragma once

#include <cstdint>
#include <optional>

#include "shoal/core/simulator.hpp"
#include "shoal/net/flow_table.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag_ids.hpp"

namespace shoal::net {

class TransitRoutes {
 public:
  /// A cell of `flow`, bound for `dst`, is now on this rank.
  void arrive(work::FlowId flow, work::GpuId dst);
  /// A cell of `flow` left this rank (its route must be here).
  void leave(work::FlowId flow);
  /// The destination of a flow with a cell on this rank.
  work::GpuId dst(work::FlowId flow) const { return routes_[at(flow)].value.dst; }
  /// Flows with a cell on this rank.
  std::uint32_t size() const { return routes_.size(); }
  /// Routes taken from notes so far.
  std::int64_t arrivals() const { return arrivals_; }

 private:
  struct Route {
    std::uint32_t cells = 0;
    work::GpuId dst = 0;
  };
  /// The slot of `flow`, which must be here.
  std::uint32_t at(work::FlowId flow) const {
    const std::uint32_t slot = routes_.find(flow);
    if (routes_[slot].key != flow) [[unlikely]]
      missing(flow);
    return slot;
  }
  [[noreturn]] static void missing(work::FlowId flow);

  FlowTable<Route> routes_{64};
  std::int64_t arrivals_ = 0;
};

/// A cell of `flow`, bound for GPU `dst` (from `src`, where this rank holds
/// the flow), leaves for node `to` on another rank, where it arrives after
/// `delay`. That rank learns the destination in a note unless it holds the
/// flow: it holds those its GPUs send or receive (exec/fragment.hpp), and those
/// it counts, where a note it does not need is dropped.
void send_route_note(core::Simulator& sim, const topo::Fabric& fabric, work::FlowId flow,
                     std::optional<work::GpuId> src, work::GpuId dst, topo::NodeId to, Time delay);

}  // namespace shoal::net
