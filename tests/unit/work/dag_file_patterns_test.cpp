// The TOML workload format's [[pattern]] entries: permutation, all-to-all, incast and
// one-to-many expanded to flows, with their labels, start and dependencies.
#include "shoal/work/dag_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "dag_file_test_support.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::work {
namespace {

using namespace dag_file_test;

TEST_F(DagFile, PermutationIsASingleCycleThroughEveryGpu) {
  const Dag dag = load(permutation("\"0..15\"", "seed = 7"));
  ASSERT_EQ(dag.coflows().size(), 1u);
  const Coflow& c = dag.coflows()[0];
  EXPECT_EQ(c.name, "perm");
  EXPECT_EQ(c.labels.type, CoflowType::kOther);
  const auto flows = dag.flows_of(c);
  ASSERT_EQ(flows.size(), 16u);
  std::vector<int> sends(16, 0), receives(16, 0);
  std::vector<GpuId> next(16, 0);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    EXPECT_EQ(flows[i].src, i);  // in the order of 'gpus'
    EXPECT_NE(flows[i].src, flows[i].dst);
    EXPECT_EQ(flows[i].bytes, 1'048'576);
    ASSERT_LT(flows[i].dst, 16u);
    ++sends[flows[i].src];
    ++receives[flows[i].dst];
    next[flows[i].src] = flows[i].dst;
  }
  EXPECT_EQ(sends, std::vector<int>(16, 1));
  EXPECT_EQ(receives, std::vector<int>(16, 1));
  // Following the flows from GPU 0 visits all 16 GPUs before coming back.
  GpuId g = 0;
  for (int step = 1; step <= 16; ++step) {
    g = next[g];
    if (step < 16) {
      EXPECT_NE(g, 0u) << "back at GPU 0 after " << step << " steps";
    }
  }
  EXPECT_EQ(g, 0u);
  dag.validate(16);
}

TEST_F(DagFile, PermutationDependsOnlyOnTheSeed) {
  const auto perm = [&](const std::string& seed_line) {
    const Dag dag = load(permutation("\"0..15\"", seed_line));
    return pairs_of(dag, dag.coflows()[0]);
  };
  const auto seven = perm("seed = 7");
  EXPECT_EQ(perm("seed = 7"), seven);
  EXPECT_NE(perm("seed = 8"), seven);
  EXPECT_EQ(perm(""), perm("seed = 1"));  // default seed 1
  EXPECT_NE(perm("seed = 1"), seven);
  EXPECT_EQ(perm("seed = 0").size(), 16u);
}

TEST_F(DagFile, PermutationOverAGpuList) {
  const Dag dag = load(permutation("[3, 10, 20, 7, 42]", "seed = 99"));
  const auto pairs = pairs_of(dag, dag.coflows()[0]);
  ASSERT_EQ(pairs.size(), 5u);
  const std::vector<GpuId> gpus = {3, 10, 20, 7, 42};
  std::vector<GpuId> dsts;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(pairs[i].first, gpus[i]);
    EXPECT_NE(pairs[i].first, pairs[i].second);
    dsts.push_back(pairs[i].second);
  }
  std::sort(dsts.begin(), dsts.end());
  EXPECT_EQ(dsts, (std::vector<GpuId>{3, 7, 10, 20, 42}));
  // Two GPUs can only swap.
  const Dag two = load(permutation("[4, 9]", "seed = 5"));
  EXPECT_EQ(pairs_of(two, two.coflows()[0]), (std::vector<Pair>{{4, 9}, {9, 4}}));
}

/// Every ordered pair of distinct members of each group, groups in order.
std::vector<Pair> expected_all_to_all(const std::vector<std::vector<GpuId>>& groups) {
  std::vector<Pair> out;
  for (const auto& group : groups) {
    for (const GpuId a : group) {
      for (const GpuId b : group) {
        if (a != b) out.emplace_back(a, b);
      }
    }
  }
  return out;
}

TEST_F(DagFile, AllToAllContiguousGroups) {
  const Dag dag = load(all_to_all("\"0..15\"", "group_size = 4"));
  const auto pairs = pairs_of(dag, dag.coflows()[0]);
  EXPECT_EQ(pairs.size(), 4u * 4u * 3u);
  EXPECT_EQ(pairs,
            expected_all_to_all({{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}));
  for (const Flow& f : dag.all_flows()) EXPECT_EQ(f.bytes, 2'000'000);
  // "contiguous" is the default.
  const Dag same = load(all_to_all("\"0..15\"", "group_size = 4\ngroups = \"contiguous\""));
  EXPECT_EQ(pairs_of(same, same.coflows()[0]), pairs);
}

TEST_F(DagFile, AllToAllStridedGroups) {
  const Dag dag = load(all_to_all("\"0..15\"", "group_size = 4\ngroups = \"strided\""));
  const auto pairs = pairs_of(dag, dag.coflows()[0]);
  EXPECT_EQ(pairs.size(), 48u);
  EXPECT_EQ(pairs,
            expected_all_to_all({{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
  // The stride is the number of groups, not the group size: 12 GPUs in 3 groups of 4.
  const Dag twelve = load(all_to_all("\"0..11\"", "group_size = 4\ngroups = \"strided\""));
  EXPECT_EQ(pairs_of(twelve, twelve.coflows()[0]),
            expected_all_to_all({{0, 3, 6, 9}, {1, 4, 7, 10}, {2, 5, 8, 11}}));
  // 12 GPUs in 6 groups of 2.
  const Dag pairs_of_two = load(all_to_all("\"0..11\"", "group_size = 2\ngroups = \"strided\""));
  EXPECT_EQ(pairs_of(pairs_of_two, pairs_of_two.coflows()[0]),
            expected_all_to_all({{0, 6}, {1, 7}, {2, 8}, {3, 9}, {4, 10}, {5, 11}}));
}

TEST_F(DagFile, AllToAllGroupsArePositionsInTheList) {
  const Dag contiguous = load(all_to_all("[5, 1, 9, 2]", "group_size = 2"));
  EXPECT_EQ(pairs_of(contiguous, contiguous.coflows()[0]),
            (std::vector<Pair>{{5, 1}, {1, 5}, {9, 2}, {2, 9}}));
  const Dag strided = load(all_to_all("[5, 1, 9, 2]", "group_size = 2\ngroups = \"strided\""));
  EXPECT_EQ(pairs_of(strided, strided.coflows()[0]),
            (std::vector<Pair>{{5, 9}, {9, 5}, {1, 2}, {2, 1}}));
  // Without group_size, one group of everything.
  const Dag all = load(all_to_all("[5, 1, 9]", ""));
  EXPECT_EQ(pairs_of(all, all.coflows()[0]),
            (std::vector<Pair>{{5, 1}, {5, 9}, {1, 5}, {1, 9}, {9, 5}, {9, 1}}));
}

TEST_F(DagFile, Incast) {
  const Dag dag = load(R"([[pattern]]
name = "in"
kind = "incast"
sources = "1..3"
destination = 0
bytes = "1MiB"
)");
  ASSERT_EQ(dag.coflows().size(), 1u);
  EXPECT_EQ(pairs_of(dag, dag.coflows()[0]), (std::vector<Pair>{{1, 0}, {2, 0}, {3, 0}}));
  EXPECT_EQ(dag.total_bytes(), 3 * 1'048'576);
}

TEST_F(DagFile, OneToMany) {
  const Dag dag = load(R"([[pattern]]
name = "out"
kind = "one-to-many"
source = 2
destinations = [0, 5, 1]
bytes = "3B"
)");
  EXPECT_EQ(pairs_of(dag, dag.coflows()[0]), (std::vector<Pair>{{2, 0}, {2, 5}, {2, 1}}));
  EXPECT_EQ(dag.total_bytes(), 9);
}

TEST_F(DagFile, PatternLabelsStartAndAfter) {
  Dag dag = load(R"([[task]]
name = "t"
gpu = 2
duration = "1us"

[[pattern]]
name = "out"
kind = "one-to-many"
source = 2
destinations = "5..5"
bytes = "1B"
type = "dp"
job = 1
iteration = 2
micro_batch = 3
layer = 4
stage = 5
start = "1ms"
after = "t"
)");
  const Coflow& c = dag.coflows()[0];
  EXPECT_EQ(c.labels.type, CoflowType::kDp);
  EXPECT_EQ(c.labels.job, 1u);
  EXPECT_EQ(c.labels.iteration, 2u);
  EXPECT_EQ(c.labels.micro_batch, 3u);
  EXPECT_EQ(c.labels.layer, 4u);
  EXPECT_EQ(c.labels.stage, 5u);
  EXPECT_EQ(c.earliest_start, 1'000'000'000);
  ASSERT_EQ(c.after.size(), 1u);
  EXPECT_EQ(c.after[0], (NodeRef{Kind::kTask, 0}));
  EXPECT_EQ(pairs_of(dag, c), (std::vector<Pair>{{2, 5}}));
  dag.validate(6);
}

}  // namespace
}  // namespace shoal::work
