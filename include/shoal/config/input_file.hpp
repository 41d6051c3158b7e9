// The files a config names (job files, workload files, partition files), as
// the config reader resolved them, and their snapshot for /meta: the contents
// of small ones and the SHA-256 of all, so a run can be rerun from its output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shoal::config {

/// A file a config key names.
struct InputFile {
  std::string role;  // "job", "workload", "partition"
  std::string name;  // as the config spells it
  std::string path;  // where it was read
};

/// An input file as a run read it.
struct InputSnapshot {
  InputFile file;
  std::uint64_t bytes = 0;
  std::string sha256;    // of the whole file, hex
  std::string contents;  // the whole file where embedded, else empty
  bool embedded = false;
};

/// Inputs up to this size are embedded in /meta by default ([output] embed_limit).
inline constexpr std::uint64_t kDefaultEmbedLimit = 16ull << 20;

/// Reads each file once: its digest, and its contents where it has at most
/// `embed_limit` bytes. A file named twice is snapshot once.
std::vector<InputSnapshot> snapshot_inputs(const std::vector<InputFile>& files,
                                           std::uint64_t embed_limit);

}  // namespace shoal::config
