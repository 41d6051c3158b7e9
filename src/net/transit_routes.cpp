#include "shoal/net/transit_routes.hpp"

#include <string>

#include "shoal/core/error.hpp"
#include "shoal/net/event_codec.hpp"

namespace shoal::net {

void TransitRoutes::arrive(work::FlowId flow, work::GpuId dst) {
  ++arrivals_;
  const std::uint32_t slot = routes_.find(flow);
  if (routes_[slot].key == flow) {
    ++routes_[slot].value.cells;
  } else {
    routes_.insert(slot, flow, {1, dst});
  }
}

void TransitRoutes::leave(work::FlowId flow) {
  const std::uint32_t slot = at(flow);
  if (--routes_[slot].value.cells == 0) routes_.erase(slot);
}

void TransitRoutes::missing(work::FlowId flow) {
  throw Error("internal: no route on this rank for flow " + std::to_string(flow) +
              ", which it does not hold");
}

void send_route_note(core::Simulator& sim, const topo::Fabric& fabric, work::FlowId flow,
                     std::optional<work::GpuId> src, work::GpuId dst, topo::NodeId to, Time delay) {
  const int there = sim.rank_of(to);
  if (sim.rank_of(fabric.gpu_node(dst)) == there) return;
  if (src && sim.rank_of(fabric.gpu_node(*src)) == there) return;
  sim.send_note(to, delay, EventTag::pack(NetEvent::kRoute), RoutePayload{flow, dst}.pack());
}

}  // namespace shoal::net
