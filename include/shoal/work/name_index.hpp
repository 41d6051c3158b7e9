// The index of a DAG's task and coflow names: which node a name belongs to.
//
// The names themselves are the nodes' own (ComputeTask::name, Coflow::name);
// the index keeps only a 32-bit fragment of each name's hash and the node, in
// one open-addressing table kept at most half full: 16 to 32 bytes a name. A map from
// string to node kept a second copy of every name and a heap node per entry,
// about 80 bytes a name, on every rank for the whole run.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "shoal/work/dag_ids.hpp"

namespace shoal::work {

class NameIndex {
 public:
  /// Resolves a node already in the index to its name.
  using NameOf = std::function<std::string_view(NodeRef)>;

  /// Adds `name` for `node`; false (and nothing added) where the name is
  /// already there.
  bool insert(std::string_view name, NodeRef node, const NameOf& name_of);
  std::optional<NodeRef> find(std::string_view name, const NameOf& name_of) const;

  std::size_t size() const { return used_; }
  std::uint64_t bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    std::uint32_t hash = 0;
    std::uint32_t node = kEmpty;  // NodeRef packed: kind in the top bit
  };
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  static constexpr std::uint32_t kCoflowBit = std::uint32_t{1} << 31;

  static std::uint32_t pack(NodeRef node);
  static NodeRef unpack(std::uint32_t packed) {
    return {(packed & kCoflowBit) != 0 ? NodeRef::Kind::kCoflow : NodeRef::Kind::kTask,
            packed & ~kCoflowBit};
  }
  static std::uint32_t hash_of(std::string_view name) {
    return static_cast<std::uint32_t>(std::hash<std::string_view>{}(name));
  }
  /// The slot holding `name`, or the empty one where it would go.
  std::size_t slot_of(std::string_view name, std::uint32_t hash, const NameOf& name_of) const;
  void grow();

  std::vector<Slot> slots_;
  std::size_t used_ = 0;
};

}  // namespace shoal::work
