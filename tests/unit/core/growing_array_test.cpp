// The realloc-backed array the DAG's flows live in: it keeps its values
// through growth and shrinking, and gives its spare room back.
#include "shoal/core/growing_array.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace shoal::core {
namespace {

struct Pair {
  std::uint32_t a = 0;
  std::uint64_t b = 0;
};

TEST(GrowingArray, KeepsItsValuesAsItGrowsAndShrinks) {
  GrowingArray<Pair> array;
  EXPECT_TRUE(array.empty());
  for (std::uint32_t i = 0; i < 1000; ++i) {
    const std::vector<Pair> one{{i, std::uint64_t{i} * 3}};
    array.append(one);
  }
  const std::vector<Pair> more{{7, 8}, {9, 10}};
  array.append(more);
  ASSERT_EQ(array.size(), 1002u);
  EXPECT_GE(array.capacity(), 1002u);
  for (std::uint32_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(array[i].a, i);
    ASSERT_EQ(array[i].b, std::uint64_t{i} * 3);
  }
  EXPECT_EQ(array[1001].b, 10u);
  array.shrink_to_fit();
  EXPECT_EQ(array.size(), 1002u);
  EXPECT_EQ(array.capacity(), 1002u);
  EXPECT_EQ(array[999].a, 999u);
  GrowingArray<Pair> moved = std::move(array);
  EXPECT_EQ(moved.size(), 1002u);
  EXPECT_EQ(moved[10].b, 30u);
  GrowingArray<Pair> empty;
  empty.shrink_to_fit();
  EXPECT_EQ(empty.capacity(), 0u);
  EXPECT_EQ(empty.data(), nullptr);
}

TEST(GrowingArray, ResizeZeroesWhatItAddsAndPushBackAppendsOne) {
  GrowingArray<std::uint32_t> array;
  const std::vector<std::uint32_t> values{7, 8, 9};
  array.append(values);
  array.resize(2);
  EXPECT_EQ(array.size(), 2u);
  array.resize(1000);  // past its room: grows, and the dropped 9 comes back as 0
  ASSERT_EQ(array.size(), 1000u);
  EXPECT_EQ(array[0], 7u);
  EXPECT_EQ(array[1], 8u);
  for (std::size_t i = 2; i < array.size(); ++i) ASSERT_EQ(array[i], 0u) << i;
  array.data()[999] = 5;
  EXPECT_EQ(array[999], 5u);
  array[998] = 4;
  array.push_back(6);
  ASSERT_EQ(array.size(), 1001u);
  EXPECT_EQ(array[998], 4u);
  EXPECT_EQ(array.back(), 6u);
  GrowingArray<std::uint32_t> pushed;
  for (std::uint32_t i = 0; i < 5000; ++i) pushed.push_back(i);
  for (std::uint32_t i = 0; i < 5000; ++i) ASSERT_EQ(pushed[i], i);
}

TEST(GrowingArray, AppendGrowsByAtLeastDoubling) {
  GrowingArray<std::uint64_t> array;
  const std::vector<std::uint64_t> one{1};
  array.append(one);
  std::size_t capacity = array.capacity();
  int grew = 0;
  for (int i = 0; i < 10000; ++i) {
    array.append(one);
    if (array.capacity() != capacity) {
      EXPECT_GE(array.capacity(), 2 * capacity);
      capacity = array.capacity();
      ++grew;
    }
  }
  EXPECT_LT(grew, 20);
}

}  // namespace
}  // namespace shoal::core
