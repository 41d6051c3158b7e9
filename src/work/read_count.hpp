// A whole, non-negative job-file value read into a field of its own width:
// shared by the job file's readers (job_file.cpp, overlap_spec.cpp).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "shoal/config/config_file.hpp"
#include "shoal/core/error.hpp"

namespace shoal::work {

/// Sets `out` to TABLE.KEY where it is given; an Error names the file and key
/// when the value is negative or wider than `out`.
template <class T>
void read_count(config::ConfigFile& c, std::string_view table, std::string_view key, T& out) {
  if (const auto v = c.integer(table, key)) {
    const std::string name = std::string(table) + "." + std::string(key);
    if (*v < 0) throw Error("config " + c.path() + ": " + name + " must not be negative");
    // Not cut to the field's width: 4294967297 layers must not become 1.
    if (static_cast<std::uint64_t>(*v) > std::numeric_limits<T>::max()) {
      throw Error("config " + c.path() + ": " + name + " must be at most " +
                  std::to_string(std::numeric_limits<T>::max()));
    }
    out = static_cast<T>(*v);
  }
}

/// read_count for a value where zero means nothing (no "derived" default):
/// a zero is named at the key that set it, not later where it is used.
template <class T>
void read_positive_count(config::ConfigFile& c, std::string_view table, std::string_view key,
                         T& out) {
  if (c.integer(table, key) == 0) {
    throw Error("config " + c.path() + ": " + std::string(table) + "." + std::string(key) +
                " must be positive");
  }
  read_count(c, table, key, out);
}

}  // namespace shoal::work
