#include "shoal/net/link_bins.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <utility>

namespace shoal::net {

LinkBins::LinkBins(std::vector<std::uint32_t> column_of, std::uint32_t columns, Time width,
                   std::uint64_t max_bytes_per_bin, std::uint64_t max_rows)
    : column_of_(std::move(column_of)),
      columns_(columns),
      width_(width),
      max_bytes_per_bin_(max_bytes_per_bin),
      max_rows_(std::max(max_rows, kMinRows)),
      wide_(needs_wide(max_bytes_per_bin)) {}

template <class From, class To>
void LinkBins::merge_pairs(const std::vector<std::vector<From>>& from,
                           std::vector<std::vector<To>>& to) {
  // Bin b becomes bin b / 2: old block k's rows land in new block k / 2.
  // Blocks never written stay unallocated.
  to.clear();
  for (std::size_t k = 0; k < from.size(); ++k) {
    if (from[k].empty()) continue;
    std::vector<To>& into = written(to, k / 2);
    for (std::uint64_t bin = k * kRowsPerBlock; bin < (k + 1) * kRowsPerBlock; ++bin) {
      const From* row = from[k].data() + offset(bin, 0);
      To* merged = into.data() + offset(bin / 2, 0);
      for (std::size_t c = 0; c < columns_; ++c) merged[c] += static_cast<To>(row[c]);
    }
  }
}

std::uint64_t LinkBins::widen_to_hold(Time start) {
  auto bin = static_cast<std::uint64_t>(start / width_);
  while (bin >= max_rows_) {
    widen();
    bin = static_cast<std::uint64_t>(start / width_);
  }
  return bin;
}

void LinkBins::widen() {
  width_ =
      width_ > std::numeric_limits<Time>::max() / 2 ? std::numeric_limits<Time>::max() : width_ * 2;
  max_bytes_per_bin_ = doubled(max_bytes_per_bin_);
  rows_ = (rows_ + 1) / 2;
  ++level_;
  // Old block k lands in new block k / 2: one that holds an unspilled old block is not settled.
  settled_blocks_ /= 2;
  const std::uint64_t old_bytes = held_bytes_;  // freed once merged
  if (wide_) {
    std::vector<std::vector<std::uint64_t>> merged;
    merge_pairs(wide_blocks_, merged);
    wide_blocks_ = std::move(merged);
  } else if (needs_wide(max_bytes_per_bin_)) {
    merge_pairs(narrow_blocks_, wide_blocks_);
    narrow_blocks_.clear();
    wide_ = true;
  } else {
    std::vector<std::vector<std::uint32_t>> merged;
    merge_pairs(narrow_blocks_, merged);
    narrow_blocks_ = std::move(merged);
  }
  held_bytes_ -= old_bytes;
}

std::uint64_t LinkBins::estimate_bytes(std::uint64_t columns, Time width,
                                       std::uint64_t max_bytes_per_bin, std::uint64_t max_rows,
                                       Time end) {
  max_rows = std::max(max_rows, kMinRows);
  const auto held = [columns](std::uint64_t rows, bool wide) {
    const std::uint64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
    const long double bytes = static_cast<long double>(blocks) * kRowsPerBlock *
                              static_cast<long double>(columns) * (wide ? 8 : 4);
    return bytes >= 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
  };
  bool wide = needs_wide(max_bytes_per_bin);
  if (end == kTimeInfinity) {
    // It fills the row limit, widens (the full blocks and the merged ones held
    // at once), and fills the limit again.
    const bool wider = wide || needs_wide(doubled(max_bytes_per_bin));
    return std::max(held(max_rows, wide) + held((max_rows + 1) / 2, wider), held(max_rows, wider));
  }
  // Cells start before the end, or up to a serialization after it where one
  // waits for its tail: a bin more.
  std::uint64_t rows = static_cast<std::uint64_t>(end / width) + 2;
  std::uint64_t most = 0;
  while (rows > max_rows) {
    max_bytes_per_bin = doubled(max_bytes_per_bin);
    const bool wider = wide || needs_wide(max_bytes_per_bin);
    most = std::max(most, held(max_rows, wide) + held((max_rows + 1) / 2, wider));
    wide = wider;
    rows = (rows + 1) / 2;
  }
  return std::max(most, held(rows, wide));
}

void LinkBins::column(std::uint32_t link, std::span<std::uint64_t> out) const {
  std::fill(out.begin(), out.end(), 0);
  if (link >= column_of_.size() || column_of_[link] == kNoColumn) return;
  const std::uint64_t bins = std::min<std::uint64_t>(out.size(), rows_);
  for (std::uint64_t b = 0; b < bins; ++b) {
    const auto block = static_cast<std::size_t>(b / kRowsPerBlock);
    const std::size_t i = offset(b, column_of_[link]);
    out[b] = wide_ ? read(wide_blocks_, block, i) : read(narrow_blocks_, block, i);
  }
  if (!spilled_.empty()) read_spilled(column_of_[link], out);
}

template <class Count>
void LinkBins::spill_blocks(std::vector<std::vector<Count>>& blocks, std::uint64_t until) {
  until = std::min<std::uint64_t>(until, blocks.size());
  std::vector<Count> by_column;
  for (std::uint64_t k = settled_blocks_; k < until; ++k) {
    std::vector<Count>& block = blocks[static_cast<std::size_t>(k)];
    if (block.empty()) continue;
    // Column by column: the end reads a few columns of every block. In tiles
    // of 16 columns, so that what one tile writes stays in cache.
    by_column.resize(block.size());
    constexpr std::size_t kTile = 16;
    for (std::size_t c0 = 0; c0 < columns_; c0 += kTile) {
      const std::size_t c1 = std::min(columns_, c0 + kTile);
      for (std::size_t r = 0; r < kRowsPerBlock; ++r) {
        for (std::size_t c = c0; c < c1; ++c)
          by_column[c * kRowsPerBlock + r] = block[r * columns_ + c];
      }
    }
    const std::uint64_t offset = spill_->append(std::as_bytes(std::span(by_column)));
    spilled_.push_back({level_, sizeof(Count) == 8, k, offset});
    held_bytes_ -= block.size() * sizeof(Count);
    std::vector<Count>().swap(block);
  }
  settled_blocks_ = std::max(settled_blocks_, until);
}

void LinkBins::settle(Time floor) {
  if (!spill_ || floor <= 0) return;
  // Block k ends at (k + 1) x kRowsPerBlock bins: settled once that is at most floor.
  const std::uint64_t until = static_cast<std::uint64_t>(floor / width_) / kRowsPerBlock;
  if (until <= settled_blocks_) return;
  if (wide_) {
    spill_blocks(wide_blocks_, until);
  } else {
    spill_blocks(narrow_blocks_, until);
  }
}

void LinkBins::read_spilled(std::uint32_t column, std::span<std::uint64_t> out) const {
  std::vector<std::byte> raw(kRowsPerBlock * sizeof(std::uint64_t));
  for (const Spilled& s : spilled_) {
    const std::size_t size = s.wide ? sizeof(std::uint64_t) : sizeof(std::uint32_t);
    const std::span<std::byte> counts(raw.data(), kRowsPerBlock * size);
    spill_->read(s.offset + std::uint64_t{column} * kRowsPerBlock * size, counts);
    const std::uint32_t shift = level_ - s.level;  // each widening since merged pairs of bins
    for (std::uint64_t r = 0; r < kRowsPerBlock; ++r) {
      std::uint64_t count = 0;
      if (s.wide) {
        std::memcpy(&count, raw.data() + r * size, size);
      } else {
        std::uint32_t narrow = 0;
        std::memcpy(&narrow, raw.data() + r * size, size);
        count = narrow;
      }
      const std::uint64_t bin = shift >= 64 ? 0 : (s.block * kRowsPerBlock + r) >> shift;
      if (count != 0 && bin < out.size()) out[static_cast<std::size_t>(bin)] += count;
    }
  }
}

void LinkBins::spread(std::uint32_t link, Time start, Time duration, std::uint64_t bytes) {
  const Time end = start + duration;
  std::uint64_t given = 0;
  for (Time at = start; at < end;) {
    // The width may double (add() widens), so each bin's end is found anew.
    const Time next = std::min(end, (at / width_ + 1) * width_);
    const std::uint64_t upto =
        next == end ? bytes
                    : static_cast<std::uint64_t>(static_cast<unsigned __int128>(bytes) *
                                                 static_cast<std::uint64_t>(next - start) /
                                                 static_cast<std::uint64_t>(duration));
    if (upto > given) add(link, at, upto - given);
    given = upto;
    at = next;
  }
}

}  // namespace shoal::net
