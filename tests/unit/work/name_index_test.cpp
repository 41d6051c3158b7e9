// The DAG's name index: every name found again through growth, duplicates
// refused, absent names not found, and names whose hashes meet told apart.
#include "shoal/work/name_index.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shoal::work {
namespace {

struct Names {
  std::vector<std::string> tasks, coflows;
  NameIndex::NameOf name_of() const {
    return [this](NodeRef n) -> std::string_view {
      return n.kind == NodeRef::Kind::kTask ? tasks[n.index] : coflows[n.index];
    };
  }
  NodeRef add(NameIndex& index, std::string name, NodeRef::Kind kind) {
    auto& list = kind == NodeRef::Kind::kTask ? tasks : coflows;
    const NodeRef node{kind, static_cast<std::uint32_t>(list.size())};
    if (!index.insert(name, node, name_of())) return {kind, ~0u};
    list.push_back(std::move(name));
    return node;
  }
};

TEST(NameIndex, FindsEveryNameThroughGrowthAndRefusesDuplicates) {
  NameIndex index;
  Names names;
  constexpr int kNodes = 100'000;
  for (int i = 0; i < kNodes; ++i) {
    const auto kind = i % 3 == 0 ? NodeRef::Kind::kCoflow : NodeRef::Kind::kTask;
    ASSERT_NE(names.add(index, "mb" + std::to_string(i % 7) + "/n" + std::to_string(i), kind).index,
              ~0u);
  }
  EXPECT_EQ(index.size(), static_cast<std::size_t>(kNodes));
  EXPECT_LE(index.bytes(), 4 * sizeof(std::uint64_t) * kNodes);  // at most half full, doubling
  for (std::uint32_t t = 0; t < names.tasks.size(); ++t) {
    const auto found = index.find(names.tasks[t], names.name_of());
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(*found, (NodeRef{NodeRef::Kind::kTask, t}));
  }
  for (std::uint32_t c = 0; c < names.coflows.size(); ++c) {
    const auto found = index.find(names.coflows[c], names.name_of());
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(*found, (NodeRef{NodeRef::Kind::kCoflow, c}));
  }
  // A name already there, as either kind, is refused and changes nothing.
  EXPECT_FALSE(index.insert(names.tasks[5], {NodeRef::Kind::kCoflow, 999'999}, names.name_of()));
  EXPECT_FALSE(index.insert(names.coflows[5], {NodeRef::Kind::kTask, 999'999}, names.name_of()));
  EXPECT_EQ(index.size(), static_cast<std::size_t>(kNodes));
  EXPECT_EQ(*index.find(names.coflows[5], names.name_of()), (NodeRef{NodeRef::Kind::kCoflow, 5}));
  EXPECT_FALSE(index.find("mb0/n", names.name_of()).has_value());
  EXPECT_FALSE(index.find("", names.name_of()).has_value());
  EXPECT_FALSE(NameIndex().find("mb0/n0", names.name_of()).has_value());
}

TEST(NameIndex, TellsApartNamesThatShareAHome) {
  // In a table of 64 slots, many names share a home slot and probe past each
  // other; every one is still found as itself.
  NameIndex index;
  Names names;
  for (int i = 0; i < 31; ++i) names.add(index, "t" + std::to_string(i), NodeRef::Kind::kTask);
  EXPECT_EQ(index.bytes(), 64 * 8u);
  for (std::uint32_t t = 0; t < 31; ++t) {
    EXPECT_EQ(index.find(names.tasks[t], names.name_of())->index, t);
  }
  EXPECT_FALSE(index.find("t31", names.name_of()).has_value());
}

}  // namespace
}  // namespace shoal::work
