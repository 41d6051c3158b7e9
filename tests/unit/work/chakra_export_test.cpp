// A Dag written as a Chakra trace and read back is the same Dag, coflow for
// coflow: tasks, exact durations, dependencies, flows and labels. And the
// collectives' steps for the kinds ASTRA-sim's microbenchmarks do not cover.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

#include "chakra_files.hpp"
#include "error_checks.hpp"
#include "shoal/core/error.hpp"
#include "shoal/work/chakra_collectives.hpp"
#include "shoal/work/chakra_trace.hpp"
#include "training_cases.hpp"

namespace shoal::work {
namespace {

using namespace chakra_test;
using shoal::test::error_of;

std::set<std::string> after_names(const Dag& dag, std::span<const NodeRef> after) {
  std::set<std::string> names;
  for (const NodeRef r : after) names.emplace(dag.name(r));
  return names;
}

std::vector<std::tuple<GpuId, GpuId, Bytes>> sorted_flows(const Dag& dag, const Coflow& c) {
  std::vector<std::tuple<GpuId, GpuId, Bytes>> flows;
  for (const Flow& f : dag.flows_of(c)) flows.emplace_back(f.src, f.dst, f.bytes);
  std::sort(flows.begin(), flows.end());
  return flows;
}

/// Every task and coflow of `a` is in `b` under its name, the same, and at the
/// same index, its flows in the same order (so a run of either is the same run).
void expect_same(const Dag& a, const Dag& b) {
  ASSERT_EQ(a.tasks().size(), b.tasks().size());
  ASSERT_EQ(a.coflows().size(), b.coflows().size());
  for (std::size_t i = 0; i < a.tasks().size(); ++i) {
    EXPECT_EQ(a.tasks()[i].name, b.tasks()[i].name);
  }
  for (std::size_t i = 0; i < a.coflows().size(); ++i) {
    EXPECT_EQ(a.coflows()[i].name, b.coflows()[i].name);
    EXPECT_EQ(a.coflows()[i].first_flow, b.coflows()[i].first_flow);
  }
  ASSERT_EQ(a.all_flows().size(), b.all_flows().size());
  for (std::size_t i = 0; i < a.all_flows().size(); ++i) {
    EXPECT_EQ(std::tie(a.all_flows()[i].src, a.all_flows()[i].dst, a.all_flows()[i].bytes),
              std::tie(b.all_flows()[i].src, b.all_flows()[i].dst, b.all_flows()[i].bytes));
  }
  for (const ComputeTask& t : a.tasks()) {
    const auto ref = b.find(t.name);
    ASSERT_TRUE(ref && ref->kind == NodeRef::Kind::kTask) << t.name;
    const ComputeTask& u = b.tasks()[ref->index];
    EXPECT_EQ(u.gpu, t.gpu) << t.name;
    EXPECT_EQ(u.duration, t.duration) << t.name;
    EXPECT_EQ(after_names(b, u.after), after_names(a, t.after)) << t.name;
    EXPECT_EQ(u.labels.kind, t.labels.kind) << t.name;
    EXPECT_EQ(std::tie(u.labels.job, u.labels.iteration, u.labels.micro_batch, u.labels.layer),
              std::tie(t.labels.job, t.labels.iteration, t.labels.micro_batch, t.labels.layer))
        << t.name;
  }
  for (const Coflow& c : a.coflows()) {
    const auto ref = b.find(c.name);
    ASSERT_TRUE(ref && ref->kind == NodeRef::Kind::kCoflow) << c.name;
    const Coflow& d = b.coflows()[ref->index];
    EXPECT_EQ(sorted_flows(b, d), sorted_flows(a, c)) << c.name;
    EXPECT_EQ(after_names(b, d.after), after_names(a, c.after)) << c.name;
    EXPECT_EQ(d.earliest_start, c.earliest_start) << c.name;
    const CoflowLabels &x = c.labels, &y = d.labels;
    EXPECT_EQ(std::tie(y.type, y.job, y.iteration, y.micro_batch, y.layer, y.stage),
              std::tie(x.type, x.job, x.iteration, x.micro_batch, x.layer, x.stage))
        << c.name;
  }
}

Dag read_back(const std::string& prefix) {
  Dag dag;
  // The default algorithm is ring: the exported all-to-alls say "direct".
  load_chakra_trace(prefix, rank_paths(prefix), {}, dag);
  return dag;
}

TEST(ChakraExport, AHandWrittenDagComesBackTheSame) {
  Dag dag;
  dag.add_task("a", 0, 1'234'567, {}, TaskLabels{TaskKind::kForward, 1, 2, 3, 4});
  dag.add_task("b", 1, 5, {});
  const std::vector<Flow> exchange = {{0, 1, 4096}, {0, 2, 4096}, {1, 0, 4096},
                                      {1, 2, 4096}, {2, 0, 4096}, {2, 1, 4096}};
  dag.add_coflow("x", CoflowLabels{CoflowType::kEp, 1, 2, 3, 4, 5}, 77, exchange, {"a", "b"});
  // Two flows of one pair, and a GPU that only receives.
  const std::vector<Flow> gather = {{0, 1, 10}, {0, 1, 20}, {2, 1, 5}};
  dag.add_coflow("y", CoflowLabels{CoflowType::kPp}, 0, gather, {"x"});
  dag.add_task("c", 1, 3 * kMicrosecond, {"y"});
  dag.add_task("d", 2, 0, {"x"});
  dag.resolve();
  dag.validate(3);
  const Scratch dir;
  const ChakraExport out = write_chakra_trace(dag, 3, dir.prefix());
  EXPECT_EQ(out.collectives, 1u);
  EXPECT_EQ(out.messages, 3u);
  EXPECT_EQ(out.files, chakra_export_files(dir.prefix(), 3));
  const Dag back = read_back(dir.prefix());
  back.validate(3);
  expect_same(dag, back);
}

TEST(ChakraExport, ATrainingJobComesBackCoflowForCoflow) {
  JobSpec job = test_jobs::small_moe();
  const Dag dag = test_jobs::generate(job, 16);
  const Scratch dir;
  const ChakraExport out = write_chakra_trace(dag, dag.gpus_used(), dir.prefix());
  EXPECT_GT(out.collectives, 0u);  // the EP all-to-alls
  EXPECT_GT(out.messages, 0u);     // PP sends, ring steps
  const Dag back = read_back(dir.prefix());
  back.validate(16);
  expect_same(dag, back);
  EXPECT_EQ(back.total_bytes(), dag.total_bytes());
}

TEST(ChakraExport, FlowsOutsideTheGpusAreRefused) {
  Dag dag;
  const std::vector<Flow> one = {{0, 3, 8}};
  dag.add_coflow("z", {}, 0, one, {});
  dag.resolve();
  const Scratch dir;
  EXPECT_EQ(error_of([&] { write_chakra_trace(dag, 2, dir.prefix()); }),
            "chakra export: a flow 0->3 outside GPUs 0..1");
}

using Steps = std::vector<std::vector<std::tuple<GpuId, GpuId, Bytes>>>;
Steps steps(CollectiveKind kind, CollectiveAlgorithm algorithm, std::uint32_t n, Bytes bytes) {
  Steps out;
  for (const std::vector<Flow>& step : collective_steps(kind, algorithm, n, bytes)) {
    auto& flows = out.emplace_back();
    for (const Flow& f : step) flows.emplace_back(f.src, f.dst, f.bytes);
  }
  return out;
}

TEST(ChakraCollectives, RootedKindsAsChainsOrFromTheRoot) {
  using K = CollectiveKind;
  constexpr auto ring = CollectiveAlgorithm::kRing;
  constexpr auto direct = CollectiveAlgorithm::kDirect;
  EXPECT_EQ(steps(K::kBroadcast, ring, 4, 8), (Steps{{{0, 1, 8}}, {{1, 2, 8}}, {{2, 3, 8}}}));
  EXPECT_EQ(steps(K::kScatter, ring, 4, 8), (Steps{{{0, 1, 24}}, {{1, 2, 16}}, {{2, 3, 8}}}));
  EXPECT_EQ(steps(K::kReduce, ring, 4, 8), (Steps{{{1, 2, 8}}, {{2, 3, 8}}, {{3, 0, 8}}}));
  EXPECT_EQ(steps(K::kGather, ring, 4, 8), (Steps{{{1, 2, 8}}, {{2, 3, 16}}, {{3, 0, 24}}}));
  EXPECT_EQ(steps(K::kBroadcast, direct, 3, 8), (Steps{{{0, 1, 8}, {0, 2, 8}}}));
  EXPECT_EQ(steps(K::kGather, direct, 3, 8), (Steps{{{1, 0, 8}, {2, 0, 8}}}));
}

TEST(ChakraCollectives, SmallAndLargeSizes) {
  using K = CollectiveKind;
  constexpr auto ring = CollectiveAlgorithm::kRing;
  // Fewer bytes than NPUs: one byte a message, never an empty flow.
  EXPECT_EQ(steps(K::kAllReduce, ring, 4, 2)[0], (std::vector<std::tuple<GpuId, GpuId, Bytes>>{
                                                     {0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 0, 1}}));
  EXPECT_TRUE(steps(K::kAllReduce, ring, 1, 64).empty());
  EXPECT_EQ(error_of([] {
              collective_steps(K::kGather, ring, 3, std::numeric_limits<Bytes>::max() / 2 + 1);
            }),
            "gather of 4611686018427387904 bytes: a message would carry more than "
            "9223372036854775807 bytes");
  EXPECT_EQ(error_of([] { parse_collective_algorithm("tree"); }),
            "unknown collective algorithm \"tree\" (use ring or direct)");
}

}  // namespace
}  // namespace shoal::work
