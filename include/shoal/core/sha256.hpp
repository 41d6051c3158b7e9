// SHA-256 (FIPS 180-4), to name an input file by its contents in /meta: a
// rerun checks that a file too large to embed is still the one that was run.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace shoal::core {

/// A SHA-256 digest fed in pieces.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  /// The digest as 64 lower-case hex digits; the object is spent after it.
  std::string hex();

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes fed
};

/// The digest of `data` as hex.
std::string sha256_hex(std::string_view data);

/// The digest of the file at `path` as hex, read in pieces; throws an Error
/// naming the file where it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace shoal::core
