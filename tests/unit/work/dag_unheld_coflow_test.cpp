// A fragment that keeps only the coflows it holds a flow of
// (Dag::drop_unheld_coflows): their ids, slots, flows, names and
// dependencies stay as they were, and the others are gone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_checks.hpp"
#include "shoal/work/dag.hpp"
#include "work/first_pair_fragment.hpp"

namespace shoal::work {
namespace {

using shoal::test::error_of;
using shoal::test::Has;
using shoal::work::test::owning_first_two;

/// Coflows "a" (GPUs 0-1), "b" (2-3), "c" (1 and 2, after "a" and "b"), "d"
/// (3 to 2) and "e" (0 to 1, after "a"), each with task "t_X" of its first
/// sender after it.
void build(Dag& dag) {
  CoflowLabels labels;
  const std::vector<std::pair<std::string, std::vector<Flow>>> coflows{
      {"a", {{0, 1, 10}}},
      {"b", {{2, 3, 20}, {3, 2, 20}}},
      {"c", {{1, 2, 30}, {2, 1, 30}}},
      {"d", {{3, 2, 40}}},
      {"e", {{0, 1, 50}, {1, 0, 50}}}};
  for (std::size_t i = 0; i < coflows.size(); ++i) {
    const auto& [name, flows] = coflows[i];
    labels.layer = static_cast<std::uint32_t>(i);
    std::vector<std::string> after;
    if (name == "c") after = {"a", "b"};
    if (name == "e") after = {"a"};
    dag.add_coflow(name, labels, 0, flows, after);
    dag.add_task("t_" + name, flows.front().src, 5, {name});
  }
  dag.resolve();
  dag.validate(4);
}

TEST(UnheldCoflows, AFragmentKeepsThoseItHoldsAFlowOfUnderTheirIds) {
  Dag dag;
  dag.set_fragment(owning_first_two());
  build(dag);
  EXPECT_TRUE(Has(error_of([&] { dag.drop_unheld_coflows(); }),
                  "coflows dropped before their dependencies and names"));
  dag.drop_names();
  dag.drop_unsent_coflow_dependencies();
  ASSERT_EQ(dag.coflows().size(), 5u);  // before the drop, every coflow, by id
  EXPECT_FALSE(dag.coflows_dropped());
  dag.drop_unheld_coflows();
  EXPECT_TRUE(dag.coflows_dropped());
  EXPECT_EQ(dag.coflow_count(), 5u);
  ASSERT_EQ(dag.coflows().size(), 3u);  // a, c, e: b and d have no flow at GPUs 0-1
  const std::vector<std::uint32_t> held{0, 2, 4};
  for (std::size_t slot = 0; slot < held.size(); ++slot) {
    const CoflowId id{held[slot]};
    EXPECT_TRUE(dag.holds_coflow(id));
    EXPECT_EQ(dag.coflow_slot(id), slot);
    EXPECT_EQ(dag.held_coflow_id(slot), id);
    EXPECT_EQ(dag.coflow(id).labels.layer, held[slot]);
    EXPECT_EQ(dag.coflows_held_below(held[slot]), slot);
    for (const FlowId f : {FlowId{dag.coflow(id).first_flow}}) EXPECT_EQ(dag.coflow_of(f), id);
  }
  EXPECT_EQ(dag.coflows_held_below(5), 3u);
  EXPECT_FALSE(dag.holds_coflow(CoflowId{1}));
  EXPECT_FALSE(dag.holds_coflow(CoflowId{3}));
  EXPECT_EQ(dag.name({NodeRef::Kind::kCoflow, 2}), "c");
  EXPECT_EQ(dag.name({NodeRef::Kind::kCoflow, 4}), "e");
  EXPECT_EQ(dag.name({NodeRef::Kind::kCoflow, 1}), Dag::kDroppedCoflowName);
  // Its tasks keep their names (they moved with the held coflows').
  ASSERT_EQ(dag.tasks().size(), 3u);
  EXPECT_EQ(dag.tasks()[0].name, "t_a");
  EXPECT_EQ(dag.tasks()[2].name, "t_e");
  // "c" is sent here (GPU 1): it keeps its dependencies, "b" among them.
  const Coflow& c = dag.coflow(CoflowId{2});
  ASSERT_EQ(c.after.size(), 2u);
  EXPECT_EQ(c.after[1], (NodeRef{NodeRef::Kind::kCoflow, 1}));
  EXPECT_EQ(dag.coflow(CoflowId{4}).bytes, 100);
  EXPECT_EQ(dag.flows_of(dag.coflow(CoflowId{4})).size(), 2u);
  dag.drop_unheld_coflows();  // again: nothing changes
  EXPECT_EQ(dag.coflows().size(), 3u);
}

TEST(UnheldCoflows, AWholeDagKeepsEveryCoflow) {
  Dag dag;
  build(dag);
  dag.drop_names();
  dag.drop_unsent_coflow_dependencies();
  dag.drop_unheld_coflows();
  EXPECT_FALSE(dag.coflows_dropped());
  EXPECT_EQ(dag.coflows().size(), 5u);
  EXPECT_EQ(dag.coflow_slot(CoflowId{3}), 3u);
  EXPECT_EQ(dag.held_coflow_id(3), CoflowId{3});
  EXPECT_EQ(dag.coflows_held_below(5), 5u);
}

}  // namespace
}  // namespace shoal::work
