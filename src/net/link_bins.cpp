#include "shoal/net/link_bins.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace shoal::net {

LinkBins::LinkBins(std::vector<std::uint32_t> column_of, std::uint32_t columns, Time width,
                   std::uint64_t max_bytes_per_bin)
    : column_of_(std::move(column_of)),
      columns_(columns),
      width_(width),
      wide_(max_bytes_per_bin > std::numeric_limits<std::uint32_t>::max()) {}

void LinkBins::column(std::uint32_t link, std::span<std::uint64_t> out) const {
  std::fill(out.begin(), out.end(), 0);
  if (link >= column_of_.size() || column_of_[link] == kNoColumn) return;
  const std::uint64_t bins = std::min<std::uint64_t>(out.size(), rows_);
  for (std::uint64_t b = 0; b < bins; ++b) {
    const auto block = static_cast<std::size_t>(b / kRowsPerBlock);
    const std::size_t i = offset(b, column_of_[link]);
    out[b] = wide_ ? read(wide_blocks_, block, i) : read(narrow_blocks_, block, i);
  }
}

}  // namespace shoal::net
