#include "expert_swap.hpp"

#include <algorithm>
#include <utility>

namespace shoal::work {

ExpertSwapper::ExpertSwapper(const JobSpec& job, const RoutingTable& routing,
                             std::vector<std::uint32_t> classes)
    : job_(job),
      routing_(routing),
      classes_(std::move(classes)),
      micro_batches_(job.parallel.micro_batches),
      member_of_(job.model.layers),
      weights_(std::size_t{job.model.layers} * job.parallel.micro_batches) {
  for (std::uint32_t layer = 0; layer < job.model.layers; ++layer) {
    if (job.model.moe_layer(layer)) member_of_[layer] = routing.placement(layer);
  }
}

void ExpertSwapper::begin_iteration(std::uint32_t it) {
  iteration_ = it;
  const double ep = job_.parallel.ep;
  for (std::uint32_t layer = 0; layer < job_.model.layers; ++layer) {
    if (!job_.model.moe_layer(layer)) continue;
    for (std::uint32_t mb = 0; mb < micro_batches_; ++mb) {
      // As RoutingTable computes them, with this iteration's placement.
      const std::vector<double>& tokens = routing_.tokens(it, layer, mb);
      double total = 0;
      for (const double t : tokens) total += t;
      std::vector<double>& w = weights_[std::size_t{layer} * micro_batches_ + mb];
      w.assign(job_.parallel.ep, 0.0);
      for (std::size_t e = 0; e < tokens.size(); ++e) {
        w[member_of_[layer][e]] += tokens[e] * ep / total;
      }
    }
  }
}

std::vector<ExpertSwapper::Swap> ExpertSwapper::end_iteration() {
  const std::uint32_t ep = job_.parallel.ep;
  std::vector<Swap> swaps;
  for (std::uint32_t layer = 0; layer < job_.model.layers; ++layer) {
    if (!job_.model.moe_layer(layer)) continue;
    std::vector<std::uint32_t>& member = member_of_[layer];
    // Each expert's tokens over the iteration, and each member's.
    std::vector<double> load(member.size(), 0.0), held(ep, 0.0);
    for (std::uint32_t mb = 0; mb < micro_batches_; ++mb) {
      const std::vector<double>& tokens = routing_.tokens(iteration_, layer, mb);
      for (std::size_t e = 0; e < tokens.size(); ++e) load[e] += tokens[e];
    }
    for (std::size_t e = 0; e < member.size(); ++e) held[member[e]] += load[e];
    // Ties go to the lowest index throughout: the rule is deterministic.
    std::uint32_t hot = 0;
    for (std::uint32_t a = 1; a < ep; ++a) {
      if (held[a] > held[hot]) hot = a;
    }
    std::uint32_t cold = ep;
    for (std::uint32_t a = 0; a < ep; ++a) {
      if (a == hot || classes_[a] != classes_[hot]) continue;
      if (cold == ep || held[a] < held[cold]) cold = a;
    }
    if (cold == ep) continue;  // no other member on the hottest member's server
    std::uint64_t x = member.size(), y = member.size();
    for (std::uint64_t e = 0; e < member.size(); ++e) {
      if (member[e] == hot && (x == member.size() || load[e] > load[x])) x = e;
      if (member[e] == cold && (y == member.size() || load[e] < load[y])) y = e;
    }
    if (x == member.size() || y == member.size()) continue;  // a member without experts
    const double hot_after = held[hot] - load[x] + load[y];
    const double cold_after = held[cold] - load[y] + load[x];
    if (std::max(hot_after, cold_after) >= held[hot]) continue;  // no better
    member[x] = cold;
    member[y] = hot;
    swaps.push_back({layer, hot, cold, x, y});
  }
  return swaps;
}

}  // namespace shoal::work
