// A generator's dependency lists by a packed key, such as what the gradients
// of each (layer, GPU, micro-batch) wait on: the names lie end to end in one
// pool and a hash map gives each key its range. A std::map of vectors would
// take a node and a block per entry (about 130 bytes with one name) for
// every GPU and layer of the job, on every rank (each walks the whole job).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "shoal/core/error.hpp"

namespace shoal::work {

class NameLists {
 public:
  /// The key's list becomes `names` (a list it had is left in the pool).
  void set(std::uint64_t key, std::span<const std::string> names) {
    const auto begin = static_cast<std::uint32_t>(pool_.size());
    pool_.insert(pool_.end(), names.begin(), names.end());
    ranges_[key] = {begin, static_cast<std::uint32_t>(names.size())};
  }
  /// `names` join the end of the key's list (a new one where it has none).
  void append(std::uint64_t key, std::span<const std::string> names) {
    std::vector<std::string> joined;
    if (const std::optional<std::span<const std::string>> old = find(key)) {
      joined.assign(old->begin(), old->end());
    }
    joined.insert(joined.end(), names.begin(), names.end());
    set(key, joined);
  }
  /// The key's list, valid until the next set or append; none where it has none.
  std::optional<std::span<const std::string>> find(std::uint64_t key) const {
    const auto it = ranges_.find(key);
    if (it == ranges_.end()) return std::nullopt;
    return std::span<const std::string>(pool_).subspan(it->second.begin, it->second.count);
  }
  /// The key's list, which it must have.
  std::span<const std::string> at(std::uint64_t key) const {
    const std::optional<std::span<const std::string>> names = find(key);
    if (!names) throw Error("internal: no dependency list for key " + std::to_string(key));
    return *names;
  }
  void clear() {
    ranges_ = {};
    pool_ = {};
  }

 private:
  struct Range {
    std::uint32_t begin;
    std::uint32_t count;
  };
  std::unordered_map<std::uint64_t, Range> ranges_;
  std::vector<std::string> pool_;
};

}  // namespace shoal::work
