// A file a run writes for itself and reads back before it ends: data too large
// to hold in memory until then (the /link_util bins). It has no name once
// created, so the system removes it when the run closes it or dies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace shoal::core {

class ScratchFile {
 public:
  /// An unnamed file in `folder` (which must exist and be writable); `what`
  /// names its use in error lines.
  ScratchFile(const std::string& folder, std::string what);
  ScratchFile(ScratchFile&& other) noexcept;
  ScratchFile& operator=(ScratchFile&& other) noexcept;
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile();

  /// Writes `bytes` at the end; returns where they start. Throws an Error
  /// naming the folder when the write fails (a full disk).
  std::uint64_t append(std::span<const std::byte> bytes);
  /// Reads `out.size()` bytes written earlier from `offset`.
  void read(std::uint64_t offset, std::span<std::byte> out) const;
  /// Bytes written so far.
  std::uint64_t size() const { return size_; }

 private:
  int fd_ = -1;
  std::string folder_;
  std::string what_;
  std::uint64_t size_ = 0;
};

}  // namespace shoal::core
