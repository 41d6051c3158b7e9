// PHOLD, the standard PDES benchmark, shaped so that its results do not depend
// on the rank count: entities form a fixed number of blocks that a partition
// never splits; an event goes to an entity of another block with probability
// `remote`, else to one of its own block, after lookahead + Exp(mean_delay).
// Links between blocks have latency = lookahead.
#pragma once

#include <cstdint>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/simulator.hpp"

namespace shoal::bench {

struct PholdConfig {
  std::uint32_t entities = 100'000;
  std::uint32_t blocks = 4;
  std::uint32_t initial_events = 1;  // per entity
  double remote = 0.1;
  Time lookahead = kMicrosecond;
  Time mean_delay = kMicrosecond;
  Time end_time = 200 * kMicrosecond;
  std::uint64_t seed = 1;
};

/// Throws Error naming the option when a value is impossible.
void validate(const PholdConfig& config);

/// Blocks as atoms, all-to-all links between blocks when remote > 0.
core::Layout phold_layout(const PholdConfig& config);

class Phold {
 public:
  Phold(const PholdConfig& config, const core::Layout& layout);

  /// Schedules the initial events of the entities this rank owns.
  void initialize(core::Simulator& sim);

  void prefetch(const core::Event& ev) const { core::prefetch(&history_[ev.target]); }

  void handle(const core::Event& ev, core::Simulator& sim) {
    std::uint64_t& h = history_[ev.target];
    h = core::mix64(h ^ static_cast<std::uint64_t>(ev.time));
    h = core::mix64(h ^ ev.tiebreak);
    core::Rng& rng = sim.rng();
    // Block b holds [b*N/B, (b+1)*N/B): the largest b with b*N/B <= e, without a table.
    const std::uint64_t scaled = (std::uint64_t{ev.target} + 1) * config_.blocks - 1;
    const auto block = static_cast<std::uint32_t>(  // 32-bit division when it fits: faster
        scaled <= UINT32_MAX ? static_cast<std::uint32_t>(scaled) / config_.entities
                             : scaled / config_.entities);
    const core::EntityId begin = block_begin_[block];
    const core::EntityId size = block_begin_[block + 1] - begin;
    core::EntityId dest;
    if (config_.remote > 0 && rng.uniform() < config_.remote) {
      // Uniform over the entities outside this block.
      const auto r = static_cast<core::EntityId>(rng.below(config_.entities - size));
      dest = r < begin ? r : r + size;
    } else {
      dest = begin + static_cast<core::EntityId>(rng.below(size));
    }
    sim.send(dest, config_.lookahead + rng.exponential(config_.mean_delay), 0, 0);
  }

  /// Collective: a hash of every entity's processed history, folded in entity-id
  /// order on rank 0 (0 on other ranks). Identical for any partition.
  std::uint64_t checksum(const core::Comm& comm) const;

 private:
  PholdConfig config_;
  std::vector<core::EntityId> block_begin_;  // blocks + 1 boundaries
  std::vector<std::uint64_t> history_;
};

}  // namespace shoal::bench
