// Shared by the fuzz targets: a per-process scratch directory for readers that
// only take a path, and the rule for what counts as a finding. A shoal::Error is
// the expected rejection of bad input; any other exception is a finding (it
// aborts, so libFuzzer saves the input), as are crashes, sanitizer reports,
// timeouts and huge allocations, which libFuzzer catches itself.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>

#include "shoal/core/error.hpp"

namespace shoal::fuzz {

/// $TMPDIR/shoal-fuzz-XXXXXX, made on first use, removed at a normal exit.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "shoal-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("shoal fuzz: mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return std::filesystem::path(pattern);
  }();
  return dir;
}

/// Writes the input to `name` under the scratch directory (the same file for
/// every input of the process) and returns its path.
inline std::string write_input(const std::uint8_t* data, std::size_t size,
                               const std::filesystem::path& name) {
  const std::filesystem::path path = scratch_dir() / name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror("shoal fuzz: writing the input");
    std::abort();
  }
  return path.string();
}

/// Runs `fn`; a shoal::Error is a clean rejection. Anything else escaping is a
/// finding: reported with its message, then abort() for libFuzzer.
template <class Fn>
void expect_only_errors(Fn&& fn) {
  try {
    fn();
  } catch (const shoal::Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shoal fuzz: an exception that is not shoal::Error: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr,
                 "shoal fuzz: an exception that is not shoal::Error (not std::exception)\n");
    std::abort();
  }
}

/// Whether TOML text holds a code point that toml++ 3.3.0 (Debian 12's) may
/// pass to is_non_ascii_horizontal_whitespace(), whose switch then reaches
/// __builtin_unreachable() (marzer/tomlplusplus#295, fixed upstream): those in
/// its 1018-code-point blocks 0, 11 and 63 above U+00A0 (U+00A1..U+0499,
/// U+2C5E..U+3057 but U+3000, U+FB26..U+FEFE; checked against its code for every
/// code point). Debian's GCC build reports a parse error on such input
/// (checked), but under UBSan it is a finding in toml++, not in Shoal: the TOML
/// targets skip these inputs.
inline bool hits_toml_unicode_bug(std::string_view text) {
  auto buggy = [](std::uint32_t c) {
    if (c <= 0xA0 || c >= 0xFEFF || c == 0x3000) return false;
    const std::uint32_t block = (c - 0xA0) / 0x3FA;  // the switch's child_index_0
    return block == 0 || block == 11 || block == 63;
  };
  auto continuation = [&](std::size_t i) {
    return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]) & 0x3Fu; };
    if (lead >= 0xC2 && lead <= 0xDF && continuation(i + 1)) {
      if (buggy(((lead & 0x1Fu) << 6) | byte(i + 1))) return true;
    } else if (lead >= 0xE0 && lead <= 0xEF && continuation(i + 1) && continuation(i + 2)) {
      if (buggy(((lead & 0x0Fu) << 12) | (byte(i + 1) << 6) | byte(i + 2))) return true;
    }
  }
  return false;
}

/// The input as text.
inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace shoal::fuzz
