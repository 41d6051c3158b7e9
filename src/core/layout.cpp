#include "shoal/core/layout.hpp"

#include <algorithm>

#include "shoal/core/error.hpp"
#include "shoal/core/random.hpp"

namespace shoal::core {

Layout::Layout(std::string topology, const std::vector<EntityId>& atom_sizes,
               std::vector<std::string> atom_names)
    : topology_(std::move(topology)), atom_names_(std::move(atom_names)) {
  if (atom_sizes.empty()) throw Error("layout '" + topology_ + "': no atoms");
  if (atom_names_.size() != atom_sizes.size()) {
    throw Error("layout '" + topology_ + "': atom names and sizes differ in count");
  }
  atom_begin_.reserve(atom_sizes.size() + 1);
  atom_begin_.push_back(0);
  std::uint64_t total = 0;
  for (std::size_t a = 0; a < atom_sizes.size(); ++a) {
    if (atom_sizes[a] == 0)
      throw Error("layout '" + topology_ + "': atom " + atom_names_[a] + " is empty");
    total += atom_sizes[a];
    if (total > kMaxEntities) {
      throw Error("layout '" + topology_ + "': more than " + std::to_string(kMaxEntities) +
                  " entities");
    }
    atom_begin_.push_back(static_cast<EntityId>(total));
  }
}

void Layout::add_link(AtomId from, AtomId to, Time latency) {
  if (from >= atom_count() || to >= atom_count()) {
    throw Error("layout '" + topology_ + "': link between unknown atoms");
  }
  links_.push_back({from, to, latency});
}

AtomId Layout::atom_of(EntityId e) const {
  const auto it = std::upper_bound(atom_begin_.begin(), atom_begin_.end(), e);
  return static_cast<AtomId>(it - atom_begin_.begin() - 1);
}

std::uint64_t Layout::fingerprint() const {
  std::uint64_t h = mix64(topology_.size());
  for (const char c : topology_) h = mix64(h ^ static_cast<unsigned char>(c));
  for (const EntityId b : atom_begin_) h = mix64(h ^ b);
  return h;
}

}  // namespace shoal::core
