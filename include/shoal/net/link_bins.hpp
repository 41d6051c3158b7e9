// Bytes per link per time bin (the output's /link_util), for the links one
// rank sends on.
//
// Stored time-major: one row per bin, one column per link, in blocks of rows.
// Every cell sent adds to the rows its transmission spans (almost always the
// one it starts in: cells are far shorter than bins), so the run writes
// into one small row (4 bytes per link) that stays in cache, where a vector per
// link put every link's current bin on a page of its own: at 1,024 GPUs that
// was a cache and TLB miss per cell and a quarter of the run's time. Counts are
// 32-bit when no link can carry 4 GiB in one bin (every realistic width), which
// halves the memory; the table grows with simulated time, a row per bin, up to
// a row limit: a bin past it widens every bin to twice its width (pairs of rows
// merged), so a long run keeps its bins within a fixed memory.
//
// The busiest links are known only at the end, so every bin of every link is
// kept until then. With a scratch file (spill_to), a block whose time the
// rank's clock has passed (settle) goes to the file, a column after another,
// and leaves memory: the run then holds a block or two, and the end reads
// back the few columns it reports. A block spilled before a widening stays at
// its width; reading it back merges its rows as the widening would have, so
// the counts are the same as if it had stayed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "shoal/core/scratch_file.hpp"
#include "shoal/core/units.hpp"

namespace shoal::net {

class LinkBins {
 public:
  static constexpr std::uint32_t kNoColumn = ~std::uint32_t{0};
  /// The fewest rows kept, whatever `max_rows` asks (a widening halves them).
  static constexpr std::uint64_t kMinRows = 2;

  LinkBins() = default;
  /// `column_of`: by link, its column here or kNoColumn; `max_bytes_per_bin`:
  /// the most one link can add to one bin (it picks the counter width).
  /// `max_rows` (at least 2): past it the bins widen.
  LinkBins(std::vector<std::uint32_t> column_of, std::uint32_t columns, Time width,
           std::uint64_t max_bytes_per_bin, std::uint64_t max_rows = UINT64_MAX);

  /// Rows used: the last bin anything was added to, plus one.
  std::uint64_t rows() const { return rows_; }
  /// The bins' width now: the first width times a power of two.
  Time width() const { return width_; }

  /// Adds `bytes` to the bin of `start`; `link` must have a column here (a
  /// link this rank sends on: the Network only transmits on those).
  void add(std::uint32_t link, Time start, std::uint64_t bytes) {
    auto bin = static_cast<std::uint64_t>(start / width_);
    if (bin >= max_rows_) [[unlikely]]
      bin = widen_to_hold(start);
    const auto block = static_cast<std::size_t>(bin / kRowsPerBlock);
    const std::size_t at = offset(bin, column_of_[link]);
    if (bin >= rows_) rows_ = bin + 1;
    if (wide_) {
      written(wide_blocks_, block)[at] += bytes;
    } else {
      written(narrow_blocks_, block)[at] += static_cast<std::uint32_t>(bytes);
    }
  }

  /// Adds `bytes` sent from `start` for `duration` to the bins the
  /// transmission spans, each in proportion to its time there: the bytes up
  /// to a bin's end are floor(bytes x elapsed / duration), so a link sending
  /// at its rate never puts more than its capacity in a bin.
  void add_spread(std::uint32_t link, Time start, Time duration, std::uint64_t bytes) {
    if (duration <= 0 || (start % width_) + duration <= width_) [[likely]] {
      add(link, start, bytes);  // within one bin
      return;
    }
    spread(link, start, duration, bytes);
  }

  /// Link `link`'s bytes in bins 0..out.size()-1 (zero where it sent nothing or
  /// is not a column here).
  void column(std::uint32_t link, std::span<std::uint64_t> out) const;

  /// The most bytes the bins of `columns` links take in a run to `end`, with
  /// the moment a widening holds the full blocks and the merged ones together:
  /// what the resource guard counts for them before the run. Where `end` is
  /// kTimeInfinity (no run.end), the bins fill the row limit, widen once and
  /// fill it again, in the counters that one widening leaves: 8-byte counters
  /// that later widenings bring (once a bin of one link could hold 4 GiB: 43 ms
  /// wide at 800 Gb/s) are counted for a run to `end`, not for an open-ended one.
  static std::uint64_t estimate_bytes(std::uint64_t columns, Time width,
                                      std::uint64_t max_bytes_per_bin, std::uint64_t max_rows,
                                      Time end);
  /// The most bytes the counters' blocks held at once so far (a widening holds
  /// the old blocks and the merged ones together).
  std::uint64_t peak_bytes() const { return peak_bytes_; }
  /// From now on, blocks that settle() passes go to `file`.
  void spill_to(core::ScratchFile file) { spill_.emplace(std::move(file)); }
  /// Nothing will be added before `floor` (every cell sent from now on starts
  /// at or after it): with a scratch file, the blocks that end by then are
  /// written to it and freed. Were a later add to land in such a block all
  /// the same, it would be counted in memory and read back with the rest.
  void settle(Time floor);
  /// Bytes written to the scratch file.
  std::uint64_t spilled_bytes() const { return spill_ ? spill_->size() : 0; }
  /// The most bytes the blocks a run with a scratch file holds at once: those
  /// a stretch between two settle() calls writes, with a margin, in the
  /// counters a widening would bring.
  static std::uint64_t estimate_settled_bytes(std::uint64_t columns,
                                              std::uint64_t max_bytes_per_bin) {
    const std::uint64_t counter = needs_wide(doubled(max_bytes_per_bin)) ? 8 : 4;
    return kLiveBlocks * kRowsPerBlock * columns * counter;
  }
  /// Widens the bins until they are `width` wide (the first width times a
  /// power of two, at least the current one): ranks agree on one width before
  /// their bins are summed.
  void widen_to(Time width) {
    while (width_ < width) widen();
  }

 private:
  // A block is a row per bin for every link the rank sends on (4 bytes each),
  // so its size grows with the rank's links: 16 rows keep the blocks a run
  // holds to a few hundred KB at 8,192 GPUs on 8 ranks. The estimate allows
  // for 16 of them at once (the rows 65,536 events may span between settles).
  static constexpr std::uint64_t kRowsPerBlock = 16;
  static constexpr std::uint64_t kLiveBlocks = 16;
  /// A block in the scratch file: its counters column by column (kRowsPerBlock
  /// a column), at the width it had after `level` widenings.
  struct Spilled {
    std::uint32_t level = 0;
    bool wide = false;
    std::uint64_t block = 0;
    std::uint64_t offset = 0;
  };
  template <class Count>
  void spill_blocks(std::vector<std::vector<Count>>& blocks, std::uint64_t until);
  /// Adds link column `column`'s spilled counts, merged to the current width, to `out`.
  void read_spilled(std::uint32_t column, std::span<std::uint64_t> out) const;
  /// Where bin `bin` of column `column` lies in its block (row-major).
  std::size_t offset(std::uint64_t bin, std::uint32_t column) const {
    return static_cast<std::size_t>(bin % kRowsPerBlock) * columns_ + column;
  }
  /// Block `block` of `blocks`, allocated (zeroed) if this is its first write.
  template <class Count>
  std::vector<Count>& written(std::vector<std::vector<Count>>& blocks, std::size_t block) {
    if (block >= blocks.size()) [[unlikely]]
      blocks.resize(block + 1);
    if (blocks[block].empty()) [[unlikely]] {
      blocks[block].assign(static_cast<std::size_t>(kRowsPerBlock) * columns_, 0);
      held_bytes_ += kRowsPerBlock * columns_ * sizeof(Count);
      peak_bytes_ = std::max(peak_bytes_, held_bytes_);
    }
    return blocks[block];
  }
  /// The count at `i` of block `block`, 0 where the block was never written.
  template <class Count>
  static std::uint64_t read(const std::vector<std::vector<Count>>& blocks, std::size_t block,
                            std::size_t i) {
    return block < blocks.size() && !blocks[block].empty() ? blocks[block][i] : 0;
  }

  /// Whether a bin that can hold `max_bytes_per_bin` needs 64-bit counters.
  static bool needs_wide(std::uint64_t max_bytes_per_bin) {
    return max_bytes_per_bin > std::numeric_limits<std::uint32_t>::max();
  }
  /// What one bin can hold once the bins are twice as wide (saturating).
  static std::uint64_t doubled(std::uint64_t max_bytes_per_bin) {
    return max_bytes_per_bin > UINT64_MAX / 2 ? UINT64_MAX : max_bytes_per_bin * 2;
  }
  void spread(std::uint32_t link, Time start, Time duration, std::uint64_t bytes);
  /// Widens until the bin of `start` is within the row limit; returns that bin.
  std::uint64_t widen_to_hold(Time start);
  /// Doubles the width: bins 2i and 2i + 1 become bin i, in 64-bit counters
  /// from when a bin could hold 4 GiB.
  void widen();
  template <class From, class To>
  void merge_pairs(const std::vector<std::vector<From>>& from, std::vector<std::vector<To>>& to);

  std::vector<std::uint32_t> column_of_;
  std::size_t columns_ = 0;
  Time width_ = 1;
  std::uint64_t max_bytes_per_bin_ = 0;
  std::uint64_t max_rows_ = UINT64_MAX;
  bool wide_ = false;  // 64-bit counters
  std::uint64_t rows_ = 0;
  // Blocks of kRowsPerBlock rows, allocated (zeroed) when first written: a
  // stretch in which no link here sent anything takes no memory. One of the two
  // is used, by the counter width.
  std::vector<std::vector<std::uint32_t>> narrow_blocks_;
  std::vector<std::vector<std::uint64_t>> wide_blocks_;
  std::uint64_t held_bytes_ = 0;  // in the blocks allocated
  std::uint64_t peak_bytes_ = 0;
  std::uint32_t level_ = 0;  // widenings so far
  std::optional<core::ScratchFile> spill_;
  std::vector<Spilled> spilled_;
  std::uint64_t settled_blocks_ = 0;  // blocks before this one were spilled (or never written)
};

}  // namespace shoal::net
