// A generator's table from a packed key to a DAG node, such as the all-gather
// that brings each (layer, GPU, dense or experts) its parameters: filled,
// sealed, then looked up. Flat and sorted, 16 bytes an entry, where a
// std::map with a name per entry would take about 120, for every GPU and
// layer of the job, on every rank (each walks the whole job).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/work/dag_ids.hpp"

namespace shoal::work {

class NodeTable {
 public:
  /// Where a key is added twice, the later node stands.
  void add(std::uint64_t key, NodeRef node) {
    entries_.push_back({key, node});
    sealed_ = false;
  }
  /// Sorts what was added, for find.
  void seal() {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.key < b.key; });
    // Of equal keys, keep the last added: it is last among them after the stable sort.
    auto out = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (std::next(it) != entries_.end() && std::next(it)->key == it->key) continue;
      *out++ = *it;
    }
    entries_.erase(out, entries_.end());
    entries_.shrink_to_fit();
    sealed_ = true;
  }
  std::optional<NodeRef> find(std::uint64_t key) const {
    if (!sealed_) throw Error("internal: a node table looked up before it was sealed");
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                                     [](const Entry& e, std::uint64_t k) { return e.key < k; });
    if (it == entries_.end() || it->key != key) return std::nullopt;
    return it->node;
  }

 private:
  struct Entry {
    std::uint64_t key;
    NodeRef node;
  };
  std::vector<Entry> entries_;
  bool sealed_ = true;
};

}  // namespace shoal::work
