#include "shoal/bench/phold.hpp"

#include <cmath>
#include <string>

#include "shoal/core/error.hpp"

namespace shoal::bench {

void validate(const PholdConfig& c) {
  if (c.entities == 0) throw Error("--entities must be at least 1");
  if (c.blocks == 0) throw Error("--blocks must be at least 1");
  if (c.blocks > c.entities) {
    throw Error("--blocks " + std::to_string(c.blocks) + " exceeds --entities " +
                std::to_string(c.entities) + " (a block needs at least one entity)");
  }
  if (c.blocks > 4096) throw Error("--blocks must be at most 4096");
  if (!(c.remote >= 0.0 && c.remote <= 1.0)) throw Error("--remote must be a fraction in [0, 1]");
  if (c.remote > 0 && c.blocks < 2) {
    throw Error("--remote > 0 needs --blocks >= 2 (remote events go to another block)");
  }
  if (c.initial_events == 0) throw Error("--init must be at least 1");
  if (c.end_time <= 0) throw Error("--end must be positive");
}

core::Layout phold_layout(const PholdConfig& c) {
  std::vector<core::EntityId> sizes(c.blocks);
  std::vector<std::string> names(c.blocks);
  for (std::uint32_t b = 0; b < c.blocks; ++b) {
    const auto begin = static_cast<core::EntityId>(std::uint64_t{b} * c.entities / c.blocks);
    const auto end = static_cast<core::EntityId>(std::uint64_t{b + 1} * c.entities / c.blocks);
    sizes[b] = end - begin;
    names[b] = "block " + std::to_string(b);
  }
  core::Layout layout(
      "phold entities=" + std::to_string(c.entities) + " blocks=" + std::to_string(c.blocks), sizes,
      std::move(names));
  if (c.remote > 0) {
    for (core::AtomId a = 0; a < c.blocks; ++a) {
      for (core::AtomId b = 0; b < c.blocks; ++b) {
        if (a != b) layout.add_link(a, b, c.lookahead);
      }
    }
  }
  return layout;
}

Phold::Phold(const PholdConfig& config, const core::Layout& layout)
    : config_(config), block_begin_(layout.atom_count() + 1), history_(layout.entity_count(), 0) {
  for (core::AtomId b = 0; b < layout.atom_count(); ++b) {
    block_begin_[b] = layout.atom_begin(b);
  }
  block_begin_[layout.atom_count()] = layout.entity_count();
}

void Phold::initialize(core::Simulator& sim) {
  for (core::EntityId e = 0; e < config_.entities; ++e) {
    if (!sim.owns(e)) continue;
    for (std::uint32_t k = 0; k < config_.initial_events; ++k) {
      sim.schedule_initial(e, e, sim.rng(e).exponential(config_.mean_delay), 0, 0);
    }
  }
}

std::uint64_t Phold::checksum(const core::Comm& comm) const {
  std::vector<std::uint64_t> all(comm.rank() == 0 ? history_.size() : 0);
  comm.sum_to_root(history_, all);  // each entity's history is non-zero on one rank only
  if (comm.rank() != 0) return 0;
  std::uint64_t h = core::mix64(history_.size());
  for (const std::uint64_t v : all) h = core::mix64(h ^ v);
  return h;
}

}  // namespace shoal::bench
