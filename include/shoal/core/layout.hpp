// What the engine needs to know of a model's structure to partition it and to
// find its lookahead: entities grouped into atoms (contiguous id ranges that a
// partition never splits, e.g. a server or a PHOLD block) and the links between
// atoms with their latencies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/core/event.hpp"

namespace shoal::core {

using AtomId = std::uint32_t;

struct AtomLink {
  AtomId from = 0;
  AtomId to = 0;
  Time latency = 0;
};

class Layout {
 public:
  /// `topology` names the model and its size ("phold entities=1000 blocks=4"); a
  /// partition file must name the same. Atom i holds `atom_sizes[i]` entities,
  /// numbered on from the previous atom's.
  Layout(std::string topology, const std::vector<EntityId>& atom_sizes,
         std::vector<std::string> atom_names);

  void add_link(AtomId from, AtomId to, Time latency);

  const std::string& topology() const { return topology_; }
  EntityId entity_count() const { return atom_begin_.back(); }
  std::size_t atom_count() const { return atom_begin_.size() - 1; }
  EntityId atom_begin(AtomId a) const { return atom_begin_[a]; }
  EntityId atom_end(AtomId a) const { return atom_begin_[a + 1]; }
  AtomId atom_of(EntityId e) const;
  const std::string& atom_name(AtomId a) const { return atom_names_[a]; }
  const std::vector<AtomLink>& links() const { return links_; }
  /// Hash of the topology name and the atom boundaries: what a partition depends on.
  std::uint64_t fingerprint() const;

 private:
  std::string topology_;
  std::vector<EntityId> atom_begin_;  // atom_count() + 1 boundaries
  std::vector<std::string> atom_names_;
  std::vector<AtomLink> links_;
};

}  // namespace shoal::core
