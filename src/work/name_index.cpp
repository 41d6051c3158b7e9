#include "shoal/work/name_index.hpp"

#include <algorithm>
#include <string>

#include "shoal/core/error.hpp"

namespace shoal::work {

std::uint32_t NameIndex::pack(NodeRef node) {
  if ((node.index & kCoflowBit) != 0) {
    throw Error("a DAG holds at most 2^31 tasks and 2^31 coflows; node " +
                std::to_string(node.index) + " is past that");
  }
  return node.index | (node.kind == NodeRef::Kind::kCoflow ? kCoflowBit : 0);
}

std::size_t NameIndex::slot_of(std::string_view name, std::uint32_t hash,
                               const NameOf& name_of) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
    const Slot& slot = slots_[at];
    if (slot.node == kEmpty) return at;
    if (slot.hash == hash && name_of(unpack(slot.node)) == name) return at;
  }
}

bool NameIndex::insert(std::string_view name, NodeRef node, const NameOf& name_of) {
  if (2 * (used_ + 1) > slots_.size()) grow();
  const std::uint32_t hash = hash_of(name);
  Slot& slot = slots_[slot_of(name, hash, name_of)];
  if (slot.node != kEmpty) return false;
  slot = {hash, pack(node)};
  ++used_;
  return true;
}

std::optional<NodeRef> NameIndex::find(std::string_view name, const NameOf& name_of) const {
  if (used_ == 0) return std::nullopt;
  const Slot& slot = slots_[slot_of(name, hash_of(name), name_of)];
  if (slot.node == kEmpty) return std::nullopt;
  return unpack(slot.node);
}

void NameIndex::grow() {
  std::vector<Slot> old(std::max<std::size_t>(64, 2 * slots_.size()));
  old.swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  // Every name in the table is distinct: each goes to the first empty slot
  // from its home, without comparing names.
  for (const Slot& s : old) {
    if (s.node == kEmpty) continue;
    std::size_t at = s.hash & mask;
    while (slots_[at].node != kEmpty) at = (at + 1) & mask;
    slots_[at] = s;
  }
}

}  // namespace shoal::work
