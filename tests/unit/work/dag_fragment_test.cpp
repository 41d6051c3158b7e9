// A DAG that keeps some of its flows only (Dag::keep_flows): the flows it
// holds are the same, found by the same ids, each coflow's in order; every
// flow keeps its destination and every coflow its bytes; and it is no longer
// grown nor validated.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::work {
namespace {

/// `coflows` coflows of 1 to 70 flows each (some straddle a 64-flow word of
/// the held bits), GPU ids up to `top`.
void build(Dag& dag, int coflows, GpuId top) {
  for (int c = 0; c < coflows; ++c) {
    std::vector<Flow> flows;
    const int n = 1 + (c * 37) % 70;
    for (int i = 0; i < n; ++i) {
      const auto src = static_cast<GpuId>((c * 13 + i * 7) % 50);
      const auto dst = static_cast<GpuId>(top - static_cast<GpuId>((c + i) % 40));
      flows.push_back({src, dst, static_cast<Bytes>(1000 + c * 100 + i)});
    }
    dag.add_coflow("c" + std::to_string(c), {}, 0, flows, {});
  }
  dag.resolve();
}

/// Keeps flows by a rule that cuts coflows (some held whole, some in part,
/// some not at all).
bool kept(const Flow& f) { return f.src % 3 == 0 || f.dst % 7 == 1; }

void expect_fragment_of(const Dag& whole, const Dag& part) {
  ASSERT_FALSE(part.whole());
  EXPECT_EQ(part.flow_count(), whole.flow_count());
  EXPECT_EQ(part.total_bytes(), whole.total_bytes());
  EXPECT_EQ(part.gpus_used(), whole.gpus_used());
  std::size_t held = 0, cut = 0;
  for (std::size_t c = 0; c < whole.coflows().size(); ++c) {
    const Coflow& a = whole.coflows()[c];
    const Coflow& b = part.coflows()[c];
    EXPECT_EQ(b.bytes, a.bytes);
    Bytes sum = 0;
    std::vector<std::pair<FlowId, Flow>> expected, seen;
    for (std::uint32_t i = 0; i < a.flow_count; ++i) {
      const FlowId f{a.first_flow + i};
      const Flow& w = whole.flow(f);
      sum += w.bytes;
      ASSERT_EQ(part.flow_dst(f), w.dst) << "flow " << f;
      ASSERT_EQ(part.holds(f), kept(w)) << "flow " << f;
      if (!kept(w)) continue;
      expected.emplace_back(f, w);
      EXPECT_EQ(part.flow(f).src, w.src);
      EXPECT_EQ(part.flow(f).bytes, w.bytes);
      EXPECT_EQ(part.coflow_of(f), CoflowId{static_cast<std::uint32_t>(c)});
    }
    EXPECT_EQ(a.bytes, sum);
    part.for_each_flow(b, [&](FlowId f, const Flow& flow) {
      EXPECT_EQ(&flow, &part.flow(f));
      seen.emplace_back(f, flow);
    });
    ASSERT_EQ(seen.size(), expected.size()) << "coflow " << c;
    ASSERT_EQ(part.flows_of(b).size(), expected.size()) << "coflow " << c;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      EXPECT_EQ(seen[i].first, expected[i].first);
      EXPECT_EQ(seen[i].second.dst, expected[i].second.dst);
    }
    held += expected.size();
    cut += !expected.empty() && expected.size() < a.flow_count;
  }
  EXPECT_GT(cut, 0u) << "no coflow held in part: nothing tested";
  EXPECT_LT(held, whole.flow_count());
  EXPECT_EQ(part.flow_capacity(), held);  // the room given back
  EXPECT_LT(part.fragment_bytes(held), whole.flow_count() * sizeof(Flow));
}

TEST(DagFragment, HoldsTheFlowsItKeepsByTheirIds) {
  for (const GpuId top : {GpuId{60}, GpuId{65535}, GpuId{70000}}) {  // 2- and 4-byte destinations
    Dag whole, part;
    build(whole, 200, top);
    build(part, 200, top);
    part.keep_flows(kept);
    expect_fragment_of(whole, part);
  }
}

TEST(DagFragment, IsNotGrownNorValidatedNorListedWhole) {
  Dag dag;
  build(dag, 10, 60);
  dag.keep_flows(kept);
  EXPECT_THROW(dag.keep_flows(kept), Error);
  EXPECT_THROW(dag.validate(100), Error);
  EXPECT_THROW((void)dag.all_flows(), Error);
  const std::vector<Flow> one{{0, 1, 10}};
  EXPECT_THROW(dag.add_coflow("late", {}, 0, one, {}), Error);
}

}  // namespace
}  // namespace shoal::work
