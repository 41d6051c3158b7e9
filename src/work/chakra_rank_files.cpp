// A Chakra trace's rank files: DIR/NAME is NAME.0.et, NAME.1.et, ... in DIR.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include "shoal/core/error.hpp"
#include "shoal/work/chakra_trace.hpp"

namespace shoal::work {

std::vector<std::string> chakra_rank_names(
    const std::string& prefix, const std::function<std::string(const std::string&)>& locate) {
  namespace fs = std::filesystem;
  auto rank_name = [&](std::size_t i) { return prefix + "." + std::to_string(i) + ".et"; };
  std::vector<std::string> names;
  std::error_code ec;
  while (names.size() <= kMaxGpuId && fs::is_regular_file(locate(rank_name(names.size())), ec)) {
    names.push_back(rank_name(names.size()));
  }
  // A higher rank file past the first one missing: a hole, not a smaller trace.
  const fs::path first = locate(rank_name(0));
  const std::string stem = fs::path(prefix).filename().string() + ".";
  std::optional<std::uint64_t> beyond;
  for (fs::directory_iterator it(first.parent_path().empty() ? "." : first.parent_path(), ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.size() <= stem.size() + 3 || file.rfind(stem, 0) != 0 ||
        file.compare(file.size() - 3, 3, ".et") != 0) {
      continue;
    }
    const std::string digits = file.substr(stem.size(), file.size() - stem.size() - 3);
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const std::uint64_t k = std::stoull(digits);
    if (k >= names.size() && (!beyond || k < *beyond)) beyond = k;
  }
  if (beyond) {
    throw Error("chakra trace " + prefix + ": " + rank_name(*beyond) + " exists but " +
                rank_name(names.size()) +
                " does not (rank files are numbered from 0 without a gap)");
  }
  if (names.empty()) {
    throw Error("chakra trace " + prefix + ": no rank file " + rank_name(0) +
                " (a trace DIR/NAME is the files NAME.0.et, NAME.1.et, ... in DIR)");
  }
  return names;
}

}  // namespace shoal::work
