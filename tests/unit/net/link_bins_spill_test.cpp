// The /link_util bins with a scratch file (LinkBins::spill_to): blocks the
// run has passed leave memory, and every column reads back as if they had
// stayed, across widenings and the switch to 64-bit counters.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/core/scratch_file.hpp"
#include "shoal/net/link_bins.hpp"

namespace shoal::net {
namespace {

constexpr Time kWidth = 10 * kMicrosecond;
const std::vector<std::uint32_t> kColumns = {LinkBins::kNoColumn, 0, 1, 2, LinkBins::kNoColumn, 3};
constexpr std::uint32_t kLinks[] = {1, 2, 3, 5};

std::string scratch_folder() {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / "shoal-spill-test";
  std::filesystem::create_directories(folder);
  return folder.string();
}

std::vector<std::uint64_t> column(const LinkBins& bins, std::uint32_t link) {
  std::vector<std::uint64_t> out(bins.rows() + 2, 99);  // every value must be written
  bins.column(link, out);
  return out;
}

/// The same adds into bins kept in memory and bins that spill, settled as a
/// run settles them (at the time it has reached), then widened to `widen_to`.
void spilled_reads_back_the_same(std::uint64_t max_bytes_per_bin, std::uint64_t max_rows,
                                 Time widen_to = 0) {
  LinkBins kept(kColumns, 4, kWidth, max_bytes_per_bin, max_rows);
  LinkBins spilled(kColumns, 4, kWidth, max_bytes_per_bin, max_rows);
  spilled.spill_to(core::ScratchFile(scratch_folder(), "test"));
  std::mt19937_64 rng(11);
  Time now = 0;
  for (int i = 0; i < 60000; ++i) {
    now += static_cast<Time>(rng() % (2 * kMicrosecond));
    if (i == 30000) now += 40 * kMillisecond;  // a silence: whole blocks never written
    const std::uint32_t link = kLinks[rng() % 4];
    // Cells start now or a little later (cut-through waits for a tail), a few
    // long ones spanning many bins.
    const Time start = now + static_cast<Time>(rng() % 3) * kMicrosecond;
    const Time duration = rng() % 50 == 0 ? 3 * kMillisecond : static_cast<Time>(rng() % 20000);
    const std::uint64_t bytes = 1 + rng() % 262144;
    kept.add_spread(link, start, duration, bytes);
    spilled.add_spread(link, start, duration, bytes);
    if (i % 500 == 0) spilled.settle(now);
  }
  // A late add into a block already spilled is still counted (in memory).
  kept.add(2, kWidth, 5);
  spilled.add(2, kWidth, 5);
  if (widen_to > 0) {
    kept.widen_to(widen_to);
    spilled.widen_to(widen_to);
  }
  EXPECT_GT(spilled.spilled_bytes(), 0u);
  EXPECT_LT(spilled.peak_bytes(), kept.peak_bytes());
  ASSERT_EQ(spilled.width(), kept.width());
  ASSERT_EQ(spilled.rows(), kept.rows());
  for (std::uint32_t link = 0; link < kColumns.size(); ++link) {
    EXPECT_EQ(column(spilled, link), column(kept, link)) << "link " << link;
  }
}

TEST(LinkBinsSpill, ReadsBackWhatStayedInMemoryWould) {
  spilled_reads_back_the_same(1'250'000, UINT64_MAX);
}

// About 15,000 bins of 10 us against a limit of 2,000 rows: three widenings,
// with blocks spilled at each width before them.
TEST(LinkBinsSpill, BlocksSpilledBeforeAWideningAreMergedOnReading) {
  spilled_reads_back_the_same(1'250'000, 2000);
  spilled_reads_back_the_same(1'250'000, 2000, 64 * kWidth);  // as another rank reached
}

// Merged bins could hold 4 GiB: the counters go to 64 bits, while blocks
// spilled before stay 32-bit in the file.
TEST(LinkBinsSpill, CountersWidenedTo64BitsReadBackWithThe32BitOnes) {
  spilled_reads_back_the_same(3'000'000'000, 2000);
}

TEST(LinkBinsSpill, WithoutAScratchFileSettlingKeepsEverything) {
  LinkBins bins(kColumns, 4, kWidth, 1'250'000);
  bins.add(1, 0, 7);
  bins.settle(kMillisecond * 100);
  EXPECT_EQ(bins.spilled_bytes(), 0u);
  EXPECT_EQ(column(bins, 1)[0], 7u);
}

TEST(ScratchFile, WritesAndReadsBack) {
  core::ScratchFile file(scratch_folder(), "test");
  const std::vector<std::uint32_t> a = {1, 2, 3}, b = {4, 5};
  EXPECT_EQ(file.append(std::as_bytes(std::span(a))), 0u);
  EXPECT_EQ(file.append(std::as_bytes(std::span(b))), 12u);
  EXPECT_EQ(file.size(), 20u);
  std::vector<std::uint32_t> got(2);
  file.read(8, std::as_writable_bytes(std::span(got)));
  EXPECT_EQ(got, (std::vector<std::uint32_t>{3, 4}));
  // Unnamed: nothing is left in its folder.
  for (const auto& entry : std::filesystem::directory_iterator(scratch_folder())) {
    EXPECT_EQ(entry.path().filename().string().rfind(".shoal-scratch-", 0), std::string::npos);
  }
}

TEST(ScratchFile, AFolderThatCannotHoldItIsOneLineNamingIt) {
  try {
    core::ScratchFile file("/nonexistent/shoal", "/link_util");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  "/link_util scratch file in /nonexistent/shoal: creating it failed: ", 0),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace shoal::net
