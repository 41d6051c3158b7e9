// The array whose unconstructed entries take no memory (core/sparse_array.hpp):
// the entries constructed hold their values, and the pages of those never
// constructed are not resident (mincore).
#include "shoal/core/sparse_array.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace shoal::core {
namespace {

struct alignas(64) Entry {
  std::int64_t value = 42;
  std::array<char, 4096 - 64> rest{};
};

/// Whether the page holding `address` is resident.
bool resident(const void* address) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<std::uintptr_t>(address) / page * page;
  unsigned char in = 0;
  if (::mincore(reinterpret_cast<void*>(at), page, &in) != 0) {
    ADD_FAILURE() << "mincore failed";
    return true;
  }
  return (in & 1) != 0;
}

TEST(SparseArray, ConstructedEntriesHoldValuesAndOthersTakeNoPages) {
  SparseArray<Entry> array(64);
  EXPECT_EQ(array.size(), 64u);
  EXPECT_EQ(array.construct(3).value, 42);
  array[3].value = 7;
  array.construct(60);
  EXPECT_EQ(array[3].value, 7);
  EXPECT_EQ(array[60].value, 42);
  EXPECT_TRUE(resident(&array[3]));
  EXPECT_TRUE(resident(&array[60]));
  for (const std::size_t i : {0u, 10u, 31u, 59u, 63u}) {
    EXPECT_FALSE(resident(&array[i])) << "entry " << i;
  }
  SparseArray<Entry> moved = std::move(array);
  EXPECT_EQ(moved[3].value, 7);
  EXPECT_EQ(array.size(), 0u);  // NOLINT(bugprone-use-after-move): it is empty
}

TEST(SparseArray, EntriesThatOwnMemoryAreDestroyedWithTheArrayOnce) {
  // Each entry holds a count that lives as long as the entry does.
  struct Owner {
    std::shared_ptr<int> alive;
    std::vector<int> values;
  };
  const auto count = std::make_shared<int>(0);
  {
    SparseArray<Owner> array(1000);
    for (const std::size_t i : {1u, 500u, 999u}) {
      Owner& entry = array.construct(i);
      entry.alive = count;
      entry.values.assign(100, static_cast<int>(i));
    }
    EXPECT_EQ(count.use_count(), 4);
    SparseArray<Owner> moved = std::move(array);
    EXPECT_EQ(count.use_count(), 4) << "the move destroyed or copied entries";
    EXPECT_EQ(moved[500].values.back(), 500);
  }
  EXPECT_EQ(count.use_count(), 1) << "an entry was not destroyed with its array";
}

}  // namespace
}  // namespace shoal::core
