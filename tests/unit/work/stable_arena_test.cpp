// StableArena: copies stay where they are and hold their items across new
// chunks, items larger than a chunk, and moves; and a DAG's names and
// dependencies, which live in its arenas, survive the DAG's move.
#include "shoal/work/stable_arena.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shoal/work/dag.hpp"

namespace shoal::work {
namespace {

TEST(StableArena, CopiesKeepTheirPlaceAndItemsAcrossChunksAndMoves) {
  StableArena<char> arena;
  std::vector<std::string> originals;
  std::vector<std::span<const char>> copies;
  // One item larger than a chunk, then names past several chunks, the last
  // with room left.
  originals.push_back(std::string(3 * StableArena<char>::kChunk, 'y'));
  for (int i = 0; i < 20'000; ++i) {
    originals.push_back("node." + std::to_string(i) +
                        std::string(static_cast<std::size_t>(i % 40), 'x'));
  }
  for (const std::string& s : originals) copies.push_back(arena.copy(s));
  const char* first = copies.front().data();
  StableArena<char> moved = std::move(arena);
  const std::span<const char> later = moved.copy(std::string_view("after the move"));
  EXPECT_EQ(copies.front().data(), first);
  for (std::size_t i = 0; i < originals.size(); ++i) {
    ASSERT_EQ(std::string_view(copies[i].data(), copies[i].size()), originals[i]) << i;
  }
  EXPECT_TRUE(moved.copy(std::string_view()).empty());
  // The moved-from arena takes a chunk of its own.
  const std::span<const char> fresh =
      arena.copy(std::string_view("fresh"));  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(std::string_view(fresh.data(), fresh.size()), "fresh");
  EXPECT_EQ(std::string_view(later.data(), later.size()), "after the move");
  EXPECT_EQ(std::string_view(copies[0].data(), copies[0].size()), originals[0]);
}

TEST(StableArena, ADagsNamesAndDependenciesSurviveItsMove) {
  Dag dag;
  dag.add_task("a.task.with.a.name.longer.than.fifteen", 0, 10, {});
  for (int i = 1; i < 5'000; ++i) {
    dag.add_task("t" + std::to_string(i), 0, 10, {"a.task.with.a.name.longer.than.fifteen"});
  }
  dag.resolve();
  const Dag moved = std::move(dag);
  EXPECT_EQ(moved.tasks()[0].name, "a.task.with.a.name.longer.than.fifteen");
  EXPECT_EQ(moved.name(NodeRef{NodeRef::Kind::kTask, 4'999}), "t4999");
  ASSERT_EQ(moved.tasks()[4'999].after.size(), 1u);
  EXPECT_EQ(moved.tasks()[4'999].after[0], (NodeRef{NodeRef::Kind::kTask, 0}));
  EXPECT_EQ(moved.find("t2500"), (NodeRef{NodeRef::Kind::kTask, 2'500}));
}

}  // namespace
}  // namespace shoal::work
