// The training generator's tables of what later nodes wait on: a packed key's
// node (NodeTable: sealed, then found; of a key added twice the later
// stands) and a packed key's list of names (NameLists: set, appended to,
// found, each key apart).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_checks.hpp"
#include "shoal/core/error.hpp"
#include "shoal/work/name_lists.hpp"
#include "shoal/work/node_table.hpp"

namespace shoal::work {
namespace {

using shoal::test::error_of;
using shoal::test::Has;

TEST(NodeTable, FindsEachKeysLastNodeOnceSealed) {
  NodeTable table;
  const NodeRef a{NodeRef::Kind::kCoflow, 7}, b{NodeRef::Kind::kCoflow, 9},
      c{NodeRef::Kind::kTask, 3};
  table.add(40, a);
  table.add(5, c);
  table.add(40, b);  // the later stands
  table.add(1ull << 40, a);
  EXPECT_TRUE(Has(error_of([&] { (void)table.find(5); }), "before it was sealed"));
  table.seal();
  EXPECT_EQ(table.find(40), b);
  EXPECT_EQ(table.find(5), c);
  EXPECT_EQ(table.find(1ull << 40), a);
  EXPECT_FALSE(table.find(6).has_value());
  EXPECT_FALSE(table.find(0).has_value());
  NodeTable empty;
  EXPECT_FALSE(empty.find(40).has_value());
}

TEST(NameLists, SetsAppendsAndFindsEachKeysList) {
  NameLists lists;
  const std::vector<std::string> first{"a task with a name longer than a short string", "b"};
  lists.set(1, first);
  lists.set(2, std::vector<std::string>{"c"});
  lists.append(1, std::vector<std::string>{"d"});
  lists.append(3, std::vector<std::string>{"e"});    // a new list
  lists.set(2, std::vector<std::string>{"f", "g"});  // replaced
  auto names = [&](std::uint64_t key) {
    const auto found = lists.find(key);
    return found ? std::vector<std::string>(found->begin(), found->end())
                 : std::vector<std::string>{"(none)"};
  };
  EXPECT_EQ(names(1), (std::vector<std::string>{first[0], "b", "d"}));
  EXPECT_EQ(names(2), (std::vector<std::string>{"f", "g"}));
  EXPECT_EQ(names(3), (std::vector<std::string>{"e"}));
  EXPECT_EQ(names(4), (std::vector<std::string>{"(none)"}));
  EXPECT_EQ(lists.at(3).size(), 1u);
  EXPECT_TRUE(Has(error_of([&] { (void)lists.at(4); }), "internal"));
  lists.clear();
  EXPECT_FALSE(lists.find(1).has_value());
}

}  // namespace
}  // namespace shoal::work
