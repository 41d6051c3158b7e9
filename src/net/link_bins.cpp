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

void LinkBins::grow(std::size_t block) {
  const std::size_t cells = static_cast<std::size_t>(kRowsPerBlock) * columns_;
  if (wide_) {
    if (wide_blocks_.size() <= block) wide_blocks_.resize(block + 1);
    wide_blocks_[block].assign(cells, 0);
  } else {
    if (narrow_blocks_.size() <= block) narrow_blocks_.resize(block + 1);
    narrow_blocks_[block].assign(cells, 0);
  }
}

std::uint64_t LinkBins::at(std::uint64_t bin, std::uint32_t column) const {
  const auto block = static_cast<std::size_t>(bin / kRowsPerBlock);
  const std::size_t i = static_cast<std::size_t>(bin % kRowsPerBlock) * columns_ + column;
  if (wide_) {
    return block < wide_blocks_.size() && !wide_blocks_[block].empty() ? wide_blocks_[block][i] : 0;
  }
  return block < narrow_blocks_.size() && !narrow_blocks_[block].empty() ? narrow_blocks_[block][i]
                                                                         : 0;
}

void LinkBins::column(std::uint32_t link, std::span<std::uint64_t> out) const {
  std::fill(out.begin(), out.end(), 0);
  if (link >= column_of_.size() || column_of_[link] == kNoColumn) return;
  const std::uint64_t bins = std::min<std::uint64_t>(out.size(), rows_);
  for (std::uint64_t b = 0; b < bins; ++b) out[b] = at(b, column_of_[link]);
}

}  // namespace shoal::net
