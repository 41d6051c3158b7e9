// Per-step expert swaps (docs/training.md, "Per-step expert swaps"): the
// experts' placement over the EP members evolves from iteration to
// iteration. After each iteration, per MoE layer, the hottest member (by the
// routing file's tokens over the iteration's micro-batches) trades its
// hottest expert for the coldest expert of the coldest member that shares its
// server, if that lowers the larger of the two members' loads. Balancing and
// Beyond swaps hot and cold experts over NVLink every step; this one-swap
// rule is Shoal's simplification of it. Private to the work layer; pure.
#pragma once

#include <cstdint>
#include <vector>

#include "shoal/core/units.hpp"
#include "shoal/work/routing_file.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::work {

class ExpertSwapper {
 public:
  struct Swap {
    std::uint32_t layer = 0;  // from 0
    std::uint32_t hot = 0;    // the member that gives its hottest expert
    std::uint32_t cold = 0;   // the member that gives its coldest expert
    std::uint64_t hot_expert = 0, cold_expert = 0;
  };

  /// `classes`: by EP member, equal for members that share a server (may swap).
  ExpertSwapper(const JobSpec& job, const RoutingTable& routing,
                std::vector<std::uint32_t> classes);

  /// The members' weights (mean 1) of iteration `it` under the current placement.
  void begin_iteration(std::uint32_t it);
  const std::vector<double>& weights(std::uint32_t layer, std::uint32_t mb) const {
    return weights_[std::size_t{layer} * micro_batches_ + mb];
  }
  /// Decides the swaps from the iteration's loads and applies them to the
  /// placement the next iteration uses: at most one per MoE layer, by layer.
  std::vector<Swap> end_iteration();
  const std::vector<std::uint32_t>& placement(std::uint32_t layer) const {
    return member_of_[layer];
  }
  /// Bytes one GPU sends for one swapped expert: its parameters
  /// (ffn_matrices x hidden x expert_ffn) in the model's dtype, and the GPU's
  /// shard of their optimizer state (one of `expert_dp` shards).
  static Bytes swap_bytes(const JobSpec& job, std::uint32_t expert_dp) {
    const std::uint64_t params = job.model.expert_params();
    return static_cast<Bytes>(params * job.model.dtype_bytes +
                              params * job.overlap.swap_state_bytes / expert_dp);
  }

 private:
  const JobSpec& job_;
  const RoutingTable& routing_;
  std::vector<std::uint32_t> classes_;
  std::uint32_t micro_batches_ = 0;
  std::uint32_t iteration_ = 0;
  std::vector<std::vector<std::uint32_t>> member_of_;  // by layer: each expert's member
  std::vector<std::vector<double>> weights_;           // by (layer, micro-batch)
};

}  // namespace shoal::work
