// A DAG built as a fragment (Dag::set_fragment): the flows it holds are the
// same, found by the same ids, each coflow's in order; every flow keeps its
// destination and every coflow its bytes; it checks the rules of the GPUs it
// owns, and leaves to the ranks together the rule its fragments share.
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

/// What a fragment keeping `kept` holds: also the flows the check refuses
/// (here those to themselves), so that every rank names them.
bool held(const Flow& f) { return kept(f) || f.src == f.dst; }

/// A fragment that keeps `kept` on a fabric of `gpus` GPUs and owns none.
FlowFragment fragment_of(GpuId gpus) {
  FlowFragment fragment;
  fragment.keep = kept;
  fragment.owns.assign(gpus, false);
  fragment.gpus = gpus;
  return fragment;
}

void expect_fragment_of(const Dag& whole, const Dag& part) {
  ASSERT_FALSE(part.whole());
  EXPECT_EQ(part.flow_count(), whole.flow_count());
  EXPECT_EQ(part.total_bytes(), whole.total_bytes());
  EXPECT_EQ(part.gpus_used(), whole.gpus_used());
  std::size_t held_flows = 0, cut = 0;
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
      ASSERT_EQ(part.holds(f), held(w)) << "flow " << f;
      if (!held(w)) continue;
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
    held_flows += expected.size();
    cut += !expected.empty() && expected.size() < a.flow_count;
  }
  EXPECT_GT(cut, 0u) << "no coflow held in part: nothing tested";
  EXPECT_LT(held_flows, whole.flow_count());
  EXPECT_EQ(part.held_count(), held_flows);
}

TEST(DagFragment, HoldsTheFlowsItKeepsByTheirIds) {
  for (const GpuId top : {GpuId{60}, GpuId{65535}, GpuId{70000}}) {  // 2- and 4-byte destinations
    Dag whole, part;
    build(whole, 200, top);
    part.set_fragment(fragment_of(top + 1));
    build(part, 200, top);
    expect_fragment_of(whole, part);
  }
}

TEST(DagFragment, IsSetBeforeItsFirstCoflowAndNeverListedWhole) {
  Dag dag;
  dag.set_fragment(fragment_of(100));
  build(dag, 10, 60);
  EXPECT_THROW(dag.set_fragment(fragment_of(100)), Error);
  EXPECT_THROW((void)dag.all_flows(), Error);
  Dag late;
  build(late, 1, 60);
  EXPECT_THROW(late.set_fragment(fragment_of(100)), Error);
}

/// Two GPUs' fragments of one DAG: GPU 0 sends "a" to 1, GPU 2 sends "b" to
/// 3, and "c" (from 0 and from 2) waits for `c_after`.
Dag two_sender_fragment(GpuId owned, const std::vector<std::string>& c_after) {
  FlowFragment fragment;
  fragment.owns.assign(4, false);
  fragment.owns[owned] = fragment.owns[owned + 1] = true;
  fragment.keep = [owned](const Flow& f) {
    return f.src / 2 == owned / 2 || f.dst / 2 == owned / 2;
  };
  fragment.gpus = 4;
  Dag dag;
  dag.set_fragment(std::move(fragment));
  const std::vector<Flow> a{{0, 1, 10}}, b{{2, 3, 10}}, c{{0, 1, 10}, {2, 3, 10}};
  dag.add_coflow("a", {}, 0, a, {});
  dag.add_coflow("b", {}, 0, b, {});
  dag.add_task("t3", 3, 5, {"b"});
  dag.add_coflow("c", {}, 0, c, c_after);
  dag.resolve();
  return dag;
}

/// The rule as the ranks check it: their bits OR'd.
std::vector<std::uint64_t> either(const Dag& x, const Dag& y) {
  std::vector<std::uint64_t> bits = x.sender_dependencies();
  const std::vector<std::uint64_t> other = y.sender_dependencies();
  for (std::size_t w = 0; w < bits.size(); ++w) bits[w] |= other[w];
  return bits;
}

TEST(DagFragment, ChecksTheDependenciesOfItsSendersTogetherWithTheOthers) {
  // "b" concerns GPU 2, a sender of "c" that only the second fragment owns.
  const Dag first = two_sender_fragment(0, {"b"});
  const Dag second = two_sender_fragment(2, {"b"});
  first.validate(4);
  second.validate(4);
  EXPECT_EQ(first.sender_dependencies()[0], 0u) << "the first fragment alone cannot tell";
  EXPECT_NO_THROW(first.check_sender_dependencies(either(first, second)));
  // GPU 3 only receives in "c": "t3" concerns none of its senders, in either fragment.
  const Dag bad_first = two_sender_fragment(0, {"t3"});
  const Dag bad_second = two_sender_fragment(2, {"t3"});
  try {
    bad_first.check_sender_dependencies(either(bad_first, bad_second));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "coflow \"c\" depends on task \"t3\", which involves none of its sending GPUs");
  }
}

}  // namespace
}  // namespace shoal::work
