// Measured expert routing replayed: a CSV of token counts per expert for each
// (iteration, layer, micro-batch), turned into the EP members' weights
// (docs/training.md, "Routing files"; tools/shoal-routing writes them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/work/training_job.hpp"

namespace shoal::work {

/// Each expert's EP member for a layer whose experts carry `load` tokens:
/// in order (expert e on member e x EP / experts), round-robin (e mod EP), or with NIC-aware
/// placement the heaviest first onto the least-loaded member with room
/// (each member keeps as many experts as in order).
std::vector<std::uint32_t> place_experts(const JobSpec& job, const std::vector<double>& load);

class RoutingTable {
 public:
  /// Reads `path` for `job` (its experts, EP, MoE layers and micro-batches);
  /// an Error names the file, the line and the problem: a bad row, an expert
  /// out of range, or an (iteration, layer, micro-batch) of the job missing.
  static RoutingTable read(const std::string& path, const JobSpec& job);

  /// The EP members' weights (mean 1) in `layer` (from 0) of micro-batch
  /// `mb` in `iteration`; the file's iterations repeat when the run has more.
  const std::vector<double>& weights(std::uint32_t iteration, std::uint32_t layer,
                                     std::uint32_t mb) const;
  std::uint32_t iterations() const { return iterations_; }
  /// The tokens of each expert in `layer` of micro-batch `mb` in `iteration`
  /// (repeating as weights() does), and each expert's member as placed.
  const std::vector<double>& tokens(std::uint32_t iteration, std::uint32_t layer,
                                    std::uint32_t mb) const {
    return tokens_[index(iteration, layer, mb)];
  }
  const std::vector<std::uint32_t>& placement(std::uint32_t layer) const {
    return member_of_[layer];
  }

 private:
  std::size_t index(std::uint32_t iteration, std::uint32_t layer, std::uint32_t mb) const {
    return (std::size_t{iteration % iterations_} * layers_ + layer) * micro_batches_ + mb;
  }
  std::uint32_t iterations_ = 0, layers_ = 0, micro_batches_ = 0;
  std::vector<std::vector<double>> weights_;           // by (iteration, layer, micro-batch)
  std::vector<std::vector<double>> tokens_;            // ... per expert
  std::vector<std::vector<std::uint32_t>> member_of_;  // by layer: each expert's member
};

}  // namespace shoal::work
