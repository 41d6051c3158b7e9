// The run's peak resident memory (cli/phase_peaks.hpp): the kernel's high
// water mark, which grows with what the process touches, and the report's
// line with it by phase.
#include "shoal/cli/phase_peaks.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "shoal/core/comm.hpp"

namespace shoal::cli {
namespace {

TEST(PhasePeaks, ThePeakGrowsWithWhatTheProcessTouches) {
  const std::uint64_t before = peak_resident_bytes();
  ASSERT_GT(before, 0u) << "no VmHWM in /proc/self/status";
  // Well above the peak so far, touched page by page, then given back.
  const std::size_t bytes = static_cast<std::size_t>(before) + (std::size_t{64} << 20);
  void* block = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  std::memset(block, 1, bytes);
  ::munmap(block, bytes);
  const std::uint64_t after = peak_resident_bytes();
  EXPECT_GE(after, before + (std::uint64_t{64} << 20));
  EXPECT_EQ(peak_resident_bytes(), after) << "a peak does not fall when memory is given back";
}

TEST(PhasePeaks, ARunCountsFromItsOwnStart) {
  // A process that runs several (shoal sweep --all): each run's peak is its
  // own, not the largest of those before it.
  const std::size_t bytes = std::size_t{96} << 20;
  void* block = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  std::memset(block, 1, bytes);
  ::munmap(block, bytes);
  const std::uint64_t earlier = peak_resident_bytes();
  PhasePeaks peaks;
  EXPECT_LE(peak_resident_bytes() + bytes / 2, earlier) << "the peak was not reset";
  peaks.end(PhasePeaks::kBuild);
  const std::string line = peaks.report(core::Comm::self());
  EXPECT_EQ(line.find("of the process"), std::string::npos) << line;
}

TEST(PhasePeaks, TheReportGivesThePeakAndHowFarItHadComeByEachPhase) {
  const core::Comm self = core::Comm::self();
  PhasePeaks none;
  EXPECT_EQ(none.report(self), "") << "no phase ended: nothing read";
  PhasePeaks peaks;
  peaks.end(PhasePeaks::kBuild);
  const std::string built = peaks.report(self);
  EXPECT_EQ(built.rfind("peak resident memory ", 0), 0u) << built;
  EXPECT_NE(built.find(" once built)"), std::string::npos) << built;
  EXPECT_EQ(built.find("largest rank"), std::string::npos) << "one rank: " << built;
  EXPECT_EQ(built.find("pilot"), std::string::npos) << "no pilot ran: " << built;
  peaks.end(PhasePeaks::kPilot);
  peaks.end(PhasePeaks::kRun);
  const std::string all = peaks.report(self);
  EXPECT_NE(all.find(" once built, "), std::string::npos) << all;
  EXPECT_NE(all.find(" after the pilot)"), std::string::npos) << all;
}

}  // namespace
}  // namespace shoal::cli
