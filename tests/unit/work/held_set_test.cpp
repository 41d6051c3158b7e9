// HeldSet numbers items held or not; add_unheld numbers a run of unheld ones
// a word at a time, as many add(false) would.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "shoal/work/held_set.hpp"

namespace shoal::work {
namespace {

TEST(HeldSet, AddUnheldIsAsManyUnheldItems) {
  // Runs that start and end inside a word, fill one exactly, and span several.
  const std::vector<std::size_t> runs{0, 3, 61, 64, 1, 200, 63, 128, 7};
  HeldSet bulk, single;
  for (const std::size_t run : runs) {
    bulk.add(true);
    single.add(true);
    bulk.add_unheld(run);
    for (std::size_t i = 0; i < run; ++i) single.add(false);
  }
  ASSERT_EQ(bulk.size(), single.size());
  for (std::uint32_t item = 0; item <= single.size(); ++item) {
    if (item < single.size()) {
      ASSERT_EQ(bulk.holds(item), single.holds(item)) << item;
    }
    ASSERT_EQ(bulk.slot(item), single.slot(item)) << item;
  }
  EXPECT_EQ(bulk.slot(static_cast<std::uint32_t>(bulk.size())), runs.size());
}

}  // namespace
}  // namespace shoal::work
