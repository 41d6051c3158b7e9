#include "shoal/net/router.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "shoal/core/error.hpp"

namespace shoal::net {

using topo::LinkId;
using topo::NodeId;
using topo::NodeKind;

Router::Router(const topo::Fabric& fabric, const work::Dag& dag, LoadBalancing balancing,
               std::vector<Time> fail_at, const std::vector<std::int32_t>& queued)
    : fabric_(fabric),
      dag_(dag),
      balancing_(balancing),
      fail_at_(std::move(fail_at)),
      queued_(queued) {
  if (fail_at_.size() != fabric.link_count()) {
    throw Error("internal: failure times for " + std::to_string(fail_at_.size()) +
                " links, fabric has " + std::to_string(fabric.link_count()));
  }
  for (const Time t : fail_at_) first_failure_ = std::min(first_failure_, t);
}

void Router::no_path(std::uint32_t flow, work::GpuId dst, NodeId here, Time now) const {
  // A rank that only routes the flow knows its destination, not its source.
  const work::Flow* f = dag_.find_flow(work::FlowId{flow});
  const std::string gpus = (f != nullptr ? "GPU " + std::to_string(f->src) + " -> " : "to ") +
                           "GPU " + std::to_string(dst);
  std::string failed;
  for (LinkId l = 0; l < fail_at_.size(); ++l) {
    if (now < fail_at_[l]) continue;
    if (!failed.empty()) failed += ", ";
    failed +=
        fabric_.node_name(fabric_.link(l).from) + " -> " + fabric_.node_name(fabric_.link(l).to);
    if (failed.size() > 200) {
      failed += ", ...";
      break;
    }
  }
  throw Error("no path left for flow " + std::to_string(flow) + " (" + gpus + ") at " +
              fabric_.node_name(here) + " at " + format_time(now) +
              "; failed links: " + (failed.empty() ? "none" : failed));
}

bool Router::reaches(NodeId at, work::GpuId dst, Time now) const {
  if (fabric_.node(at).kind == NodeKind::kGpu) return at == fabric_.gpu_node(dst);
  for (const LinkId l : fabric_.next_links(at, dst)) {
    if (!failed(l, now) && reaches(fabric_.link(l).to, dst, now)) return true;
  }
  return false;
}

bool Router::reaches_by_detour(NodeId at, work::GpuId dst, Time now) const {
  if (reaches(at, dst, now)) return true;
  for (const LinkId l : fabric_.out_links(at)) {
    const topo::Link& link = fabric_.link(l);
    if (!link.up && !failed(l, now) && fabric_.node(link.to).kind == NodeKind::kSwitch &&
        reaches_by_detour(link.to, dst, now)) {
      return true;
    }
  }
  return false;
}

LinkId Router::nic_port(work::GpuId g, std::uint32_t flow, work::GpuId dst, Time now) const {
  // A NIC with several ports (dual plane): one on a plane that reaches the
  // destination, by the flow's hash, so a flow stays on one plane.
  const auto ports = fabric_.nic_links(g);
  if (ports.size() == 1 && now < first_failure_) return ports.front();
  std::array<LinkId, 16> usable{};
  std::size_t n = 0;
  for (const LinkId port : ports) {
    if (n == usable.size()) break;
    const NodeId leaf = fabric_.link(port).to;
    if (!fabric_.reachable_on(fabric_.node(leaf).plane, dst)) continue;
    if (now >= first_failure_ && (failed(port, now) || !reaches(leaf, dst, now))) continue;
    usable[n++] = port;
  }
  if (n == 0) no_path(flow, dst, fabric_.gpu_node(g), now);
  return usable[static_cast<std::size_t>(core::mix64(flow_hash(flow)) % n)];
}

LinkId Router::first_link(std::uint32_t flow, Time now) const {
  const work::Flow& f = dag_.flow(work::FlowId{flow});
  const std::uint32_t per_server = fabric_.gpus_per_server();
  // Inside the server, or to another plane (PXN: to the GPU of this server that
  // has a port on the destination's plane): over NVLink first.
  if (f.src / per_server == f.dst / per_server || !fabric_.shares_plane(f.src, f.dst)) {
    const LinkId nvlink = fabric_.out_links(fabric_.gpu_node(f.src)).front();
    if (failed(nvlink, now)) no_path(flow, f.dst, fabric_.gpu_node(f.src), now);
    return nvlink;
  }
  return nic_port(f.src, flow, f.dst, now);
}

LinkId Router::switch_link(NodeId here, std::uint32_t flow, work::GpuId dst, Time now,
                           core::Rng& rng) const {
  const auto choices = fabric_.next_links(here, dst);
  if (now < first_failure_) {
    if (balancing_ != LoadBalancing::kEcmp && choices.size() > 1) {
      return spray(choices.data(), choices.size(), rng);
    }
    if (choices.empty()) return fabric_.ecmp_link(here, dst, flow_hash(flow));  // its error
    return topo::Fabric::ecmp_pick(choices, here, flow_hash(flow));
  }
  std::array<LinkId, 256> usable{};
  std::size_t n = 0;
  for (const LinkId l : choices) {
    if (n < usable.size() && !failed(l, now) && reaches(fabric_.link(l).to, dst, now)) {
      usable[n++] = l;
    }
  }
  if (n == 0) {
    // Every way on towards dst is down (a cell already past its last choice, at
    // a switch above a failed down link): a detour down to a switch from which
    // dst is reachable (directly or by a further detour down), from where
    // up/down routing goes around the failure.
    for (const LinkId l : fabric_.out_links(here)) {
      const topo::Link& link = fabric_.link(l);
      if (n < usable.size() && !link.up && !failed(l, now) &&
          fabric_.node(link.to).kind == NodeKind::kSwitch && reaches_by_detour(link.to, dst, now)) {
        usable[n++] = l;
      }
    }
  }
  if (n == 0) no_path(flow, dst, here, now);
  if (n == 1) return usable.front();
  if (balancing_ != LoadBalancing::kEcmp) return spray(usable.data(), n, rng);
  return usable[core::mix64(flow_hash(flow) ^ (std::uint64_t{here} << 32)) % n];
}

LinkId Router::spray(const LinkId* links, std::size_t n, core::Rng& rng) const {
  if (balancing_ == LoadBalancing::kSpray) return links[rng.below(n)];
  // Adaptive: the least queued; among equals, one at random (a fixed order
  // would fall into step with the traffic).
  std::int32_t least = INT32_MAX;
  std::size_t ties = 0;
  LinkId chosen = links[0];
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t q = queued_[links[i]];
    if (q < least) {
      least = q;
      ties = 1;
      chosen = links[i];
    } else if (q == least && rng.below(++ties) == 0) {
      chosen = links[i];  // reservoir choice: each tie equally likely
    }
  }
  return chosen;
}

LinkId Router::next_link(NodeId here, std::uint32_t flow, work::GpuId dst, Time now,
                         core::Rng& rng) const {
  const topo::Node& node = fabric_.node(here);
  if (node.kind == NodeKind::kSwitch) return switch_link(here, flow, dst, now, rng);
  if (node.kind == NodeKind::kGpu) return nic_port(node.index, flow, dst, now);  // relaying (PXN)
  // At the destination's NVSwitch, or at the sender's towards its relay (PXN):
  // the sender's server is on the sender's rank, which holds the flow.
  const std::uint32_t per_server = fabric_.gpus_per_server();
  const work::GpuId to = dst / per_server == node.index
                             ? dst
                             : fabric_.relay_for(dag_.flow(work::FlowId{flow}).src, dst);
  const LinkId nvlink = fabric_.out_links(here)[to % per_server];
  if (failed(nvlink, now)) no_path(flow, dst, here, now);
  return nvlink;
}

}  // namespace shoal::net
