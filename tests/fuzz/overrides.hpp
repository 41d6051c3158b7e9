// Config inputs may start with "#set TABLE.KEY=VALUE" lines: TOML comments to
// the parser, --set overrides to the harness, so that one corpus of TOML files
// also exercises the overrides.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shoal::fuzz {

inline std::vector<std::string> leading_overrides(std::string_view text) {
  std::vector<std::string> out;
  constexpr std::string_view kPrefix = "#set ";
  while (text.substr(0, kPrefix.size()) == kPrefix) {
    const auto end = text.find('\n');
    out.emplace_back(text.substr(kPrefix.size(), end == std::string_view::npos
                                                     ? std::string_view::npos
                                                     : end - kPrefix.size()));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace shoal::fuzz
