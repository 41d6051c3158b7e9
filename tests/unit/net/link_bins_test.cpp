#include "shoal/net/link_bins.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace shoal::net {
namespace {

constexpr Time kWidth = 100 * kMicrosecond;

/// Links 0..5, of which this rank sends on 1, 2, 4 and 5 (columns 0..3).
std::vector<std::uint32_t> columns() {
  return {LinkBins::kNoColumn, 0, 1, LinkBins::kNoColumn, 2, 3};
}

std::vector<std::uint64_t> column(const LinkBins& bins, std::uint32_t link, std::size_t n) {
  std::vector<std::uint64_t> out(n, 99);  // every value must be written
  bins.column(link, out);
  return out;
}

/// Random adds over 30 ms (with a silent stretch) against a naive sum at the
/// width the bins end with; `max_rows` makes them widen on the way.
void matches_sums(std::uint64_t max_bytes_per_bin, std::uint64_t max_rows = UINT64_MAX,
                  Time widen_to = 0) {
  LinkBins bins(columns(), 4, kWidth, max_bytes_per_bin, max_rows);
  struct Add {
    std::uint32_t link;
    Time t;
    std::uint64_t bytes;
  };
  std::vector<Add> adds;
  std::mt19937_64 rng(7);
  const std::uint32_t owned[] = {1, 2, 4, 5};
  for (int i = 0; i < 20000; ++i) {
    // Times from 0 to 30 ms with a silent stretch (3 to 20 ms: whole blocks never written).
    Time t = static_cast<Time>(rng() % static_cast<std::uint64_t>(13 * kMillisecond));
    if (t >= 3 * kMillisecond) t += 17 * kMillisecond;
    const std::uint32_t link = owned[rng() % 4];
    const std::uint64_t bytes = 1 + rng() % 262144;
    bins.add(link, t, bytes);
    adds.push_back({link, t, bytes});
  }
  if (widen_to > 0) bins.widen_to(widen_to);
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> expected;  // (link, bin)
  std::uint64_t last_bin = 0;
  for (const Add& a : adds) {
    const auto bin = static_cast<std::uint64_t>(a.t / bins.width());
    expected[{a.link, bin}] += a.bytes;
    last_bin = std::max(last_bin, bin);
  }
  EXPECT_LT(bins.rows(), max_rows);
  EXPECT_EQ(bins.rows(), last_bin + 1);
  for (std::uint32_t link = 0; link < 6; ++link) {
    const std::vector<std::uint64_t> got = column(bins, link, bins.rows() + 3);
    for (std::uint64_t b = 0; b < got.size(); ++b) {
      const auto it = expected.find({link, b});
      ASSERT_EQ(got[b], it == expected.end() ? 0 : it->second) << "link " << link << " bin " << b;
    }
  }
}

TEST(LinkBins, ThirtyTwoBitCountersSumEachLinksBytesPerBin) { matches_sums(1'250'000); }

TEST(LinkBins, SixtyFourBitCountersWhenABinCanHoldFourGiB) {
  matches_sums(std::uint64_t{1} << 33);
  // Beyond 32 bits in one bin: a 100 ms bin of a 3.6 Tb/s link holds 45 GB.
  LinkBins bins(columns(), 4, 100 * kMillisecond, 45'000'000'000);
  for (int i = 0; i < 4; ++i) bins.add(2, 5 * kMillisecond, 3'000'000'000);
  EXPECT_EQ(column(bins, 2, 1)[0], 12'000'000'000u);
}

// 30 ms of 100 us bins is 300 rows: with at most 40 they widen three times,
// to 800 us (38 rows), and every bin is the sum of the bins it merged.
TEST(LinkBins, PastTheRowLimitBinsWidenAndStillSumEachLinksBytes) {
  matches_sums(1'250'000, 40);
  LinkBins bins(columns(), 4, kWidth, 1'250'000, 40);
  bins.add(1, 30 * kMillisecond - 1, 1);
  EXPECT_EQ(bins.width(), 8 * kWidth);
  EXPECT_EQ(bins.rows(), 38u);
  // And with 64-bit counters, and widened afterwards to a width another rank reached.
  matches_sums(std::uint64_t{1} << 33, 40);
  matches_sums(1'250'000, 1000, 32 * kWidth);
}

// Merging two bins of 3 GB each needs more than 32 bits: the counters widen too.
TEST(LinkBins, WideningSwitchesToSixtyFourBitsWhenABinCouldHoldFourGiB) {
  LinkBins bins(columns(), 4, kWidth, 3'000'000'000, 4);
  bins.add(4, 0, 3'000'000'000);
  bins.add(4, kWidth, 3'000'000'000);
  bins.add(5, 3 * kWidth, 7);
  EXPECT_EQ(column(bins, 4, 4), (std::vector<std::uint64_t>{3'000'000'000, 3'000'000'000, 0, 0}));
  bins.add(4, 4 * kWidth, 1);  // row 4 is past the limit of 4: bins of 2 widths
  EXPECT_EQ(bins.width(), 2 * kWidth);
  EXPECT_EQ(column(bins, 4, 3), (std::vector<std::uint64_t>{6'000'000'000, 0, 1}));
  EXPECT_EQ(column(bins, 5, 3), (std::vector<std::uint64_t>{0, 7, 0}));
}

/// Every link of columns() sends in every bin to `end`: the most the bins
/// held at once against what the resource guard counts for them.
void peak_within_estimate(std::uint64_t max_bytes_per_bin, std::uint64_t max_rows, Time end,
                          Time estimated_end) {
  LinkBins bins(columns(), 4, kWidth, max_bytes_per_bin, max_rows);
  for (Time t = 0; t < end; t += kWidth / 2) {
    for (const std::uint32_t link : {1u, 2u, 4u, 5u}) bins.add(link, t, 1);
  }
  const std::uint64_t estimate =
      LinkBins::estimate_bytes(4, kWidth, max_bytes_per_bin, max_rows, estimated_end);
  EXPECT_GE(estimate, bins.peak_bytes()) << max_rows << " rows, to " << end;
  // Tight: at most a block of 64 rows more (the estimate allows a cell that
  // starts after the end).
  EXPECT_LE(estimate, bins.peak_bytes() + 64 * 4 * 8) << max_rows << " rows, to " << end;
}

TEST(LinkBins, EstimateHoldsThePeakOfBinsFilledToTheEnd) {
  peak_within_estimate(1'250'000, UINT64_MAX, 30 * kMillisecond, 30 * kMillisecond);
  peak_within_estimate(1'250'000, UINT64_MAX, 64 * kWidth, 64 * kWidth);  // a block's edge
  peak_within_estimate(std::uint64_t{1} << 33, UINT64_MAX, 30 * kMillisecond, 30 * kMillisecond);
  // Widening: the full blocks and the merged ones are held at once.
  peak_within_estimate(1'250'000, 40, 30 * kMillisecond, 30 * kMillisecond);
  peak_within_estimate(1'250'000, 200, 30 * kMillisecond, 30 * kMillisecond);
  peak_within_estimate(1'250'000, 1000, 30 * kMillisecond, 30 * kMillisecond);  // none
  // ... and switching to 64-bit counters on the way.
  peak_within_estimate(3'000'000'000, 130, 30 * kMillisecond, 30 * kMillisecond);
  // With no end, the bins fill the limit and widen: the same bound however long.
  peak_within_estimate(1'250'000, 200, 30 * kMillisecond, kTimeInfinity);
  peak_within_estimate(1'250'000, 200, 300 * kMillisecond, kTimeInfinity);
}

TEST(LinkBins, EstimateOfNoColumnsIsZero) {
  EXPECT_EQ(LinkBins::estimate_bytes(0, kWidth, 1'250'000, 40, kTimeInfinity), 0u);
  const LinkBins bins(columns(), 4, kWidth, 1000);
  EXPECT_EQ(bins.peak_bytes(), 0u);
}

TEST(LinkBins, ACellSpanningBinsIsSplitByItsTimeInEach) {
  LinkBins bins(columns(), 4, kWidth, 1'250'000);
  bins.add_spread(1, 10 * kMicrosecond, 20 * kMicrosecond, 4000);  // within bin 0
  // 1,000 bytes from 90 us to 130 us: a quarter in bin 0, the rest in bin 1.
  bins.add_spread(1, 90 * kMicrosecond, 40 * kMicrosecond, 1000);
  // 3 bytes over three bins of equal time: floor splits, the last bin the rest.
  bins.add_spread(2, 50 * kMicrosecond, 300 * kMicrosecond, 3);
  EXPECT_EQ(column(bins, 1, 3), (std::vector<std::uint64_t>{4250, 750, 0}));
  EXPECT_EQ(column(bins, 2, 4), (std::vector<std::uint64_t>{0, 1, 1, 1}));
}

TEST(LinkBins, BackToBackLargeCellsNeverFillABinPastTheLinksRate) {
  // 16 MiB cells at 100 Gb/s (1.34 ms each, 13.4 bins): counted whole in the
  // bin they start in, a bin showed 13 times the link's capacity.
  constexpr BitsPerSecond kRate = 100'000'000'000;
  constexpr std::uint64_t kCapacity = 1'250'000;  // 100 Gb/s x 100 us
  constexpr Bytes kCell = 16 * 1024 * 1024;
  const Time cell_time = transmit_time(kCell, kRate);
  LinkBins bins(columns(), 4, kWidth, kCapacity + kCell);
  Time at = 3 * kMicrosecond;
  for (int i = 0; i < 40; ++i, at += cell_time) bins.add_spread(4, at, cell_time, kCell);
  const std::vector<std::uint64_t> got = column(bins, 4, bins.rows());
  EXPECT_EQ(bins.rows(), static_cast<std::uint64_t>((at - 1) / kWidth) + 1);
  std::uint64_t sum = 0;
  for (std::size_t b = 0; b < got.size(); ++b) {
    EXPECT_LE(got[b], kCapacity) << "bin " << b;
    sum += got[b];
  }
  EXPECT_EQ(sum, 40 * static_cast<std::uint64_t>(kCell));
  // Busy bins between the first and the last are full to within the cells' rounding.
  for (std::size_t b = 1; b + 1 < got.size(); ++b) EXPECT_GE(got[b], kCapacity - 2) << "bin " << b;
}

TEST(LinkBins, SpreadAcrossAWideningStillSumsTheBytes) {
  // Four rows at most: a cell from 50 us to 750 us widens the bins to 200 us
  // on the way; every byte lands, in proportion to the time per bin.
  LinkBins bins(columns(), 4, kWidth, 1'250'000, 4);
  bins.add_spread(5, 50 * kMicrosecond, 700 * kMicrosecond, 7000);
  EXPECT_EQ(bins.width(), 2 * kWidth);
  EXPECT_EQ(column(bins, 5, 4), (std::vector<std::uint64_t>{1500, 2000, 2000, 1500}));
}

TEST(LinkBins, EmptyUntilWritten) {
  const LinkBins bins(columns(), 4, kWidth, 1000);
  EXPECT_EQ(bins.rows(), 0u);
  EXPECT_EQ(column(bins, 1, 5), std::vector<std::uint64_t>(5, 0));
  EXPECT_EQ(column(bins, 3, 2), std::vector<std::uint64_t>(2, 0));  // not a column here
}

}  // namespace
}  // namespace shoal::net
