// The EP all-to-all on the wire (docs/training.md, "Expert parallelism on the
// wire"): each ep_dedup mode's bytes and links, FP8 with its scales, and
// node-limited routing, exactly, on an EP group of 12 that spans a full
// 8-GPU server and half of another (36 experts, top-3, hidden 1000).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "shoal/work/training_dag.hpp"
#include "training_cases.hpp"

namespace shoal::work {
namespace {

using namespace test_jobs;

/// 24 GPUs (3 servers), TP 1, PP 1, EP 12: group 0 is GPUs 0-11, eight on
/// server 0 and four on server 1. 500 tokens a micro-batch, one micro-batch.
JobSpec odd_group(EpDedup dedup, std::uint32_t node_limit = 0) {
  JobSpec j = small_moe();
  j.model.hidden = 1000;
  j.model.heads = 8;
  j.model.experts = 36;
  j.model.top_k = 3;
  j.model.node_limit = node_limit;
  j.parallel.tp = 1;
  j.parallel.pp = 1;
  j.parallel.ep = 12;
  j.parallel.micro_batches = 1;
  j.parallel.micro_batch_tokens = 500;
  j.ep_comm.dedup = dedup;
  return j;
}

/// C(n, k) / C(m, k): the chance that k draws from m miss a set of m - n.
double ratio(int n, int m, int k) {
  double r = 1;
  for (int i = 0; i < k; ++i) r *= static_cast<double>(n - i) / (m - i);
  return r;
}

Bytes copies(double per_token, std::int64_t token_bytes = 2000) {
  return std::llround(500.0 * static_cast<double>(token_bytes) * per_token);
}

struct Split {
  Bytes network = 0, nvlink = 0;
  std::size_t flows = 0;
};

/// The first layer-2 coflow of group 0 whose name ends in `suffix` ("f.ep0.0.to"
/// is the forward dispatch), its bytes by link kind.
Split coflow_bytes(const Dag& dag, const std::string& suffix) {
  for (const Coflow& c : dag.coflows()) {
    if (c.name.find(".L2.") == std::string::npos || !c.name.ends_with(suffix)) continue;
    Split s;
    for (const Flow& f : dag.flows_of(c)) {
      EXPECT_LT(f.src, 12u);  // group 0 only
      EXPECT_LT(f.dst, 12u);
      (f.src / 8 == f.dst / 8 ? s.nvlink : s.network) += f.bytes;
      ++s.flows;
    }
    return s;
  }
  ADD_FAILURE() << "no coflow ending in " << suffix;
  return {};
}

TEST(EpComm, PerExpertIsMegatronsAllToAll) {
  JobSpec job = odd_group(EpDedup::kPerExpert);
  const Dag dag = generate(job, 24);
  // 500 x 3 x 2000 / 12 = 250,000 B to each of the 11 others; 68 pairs share a server.
  const Split s = coflow_bytes(dag, ".f.ep0.0.to");
  EXPECT_EQ(s.flows, 132u);
  EXPECT_EQ(s.nvlink, 68 * 250'000);
  EXPECT_EQ(s.network, 64 * 250'000);
  // The default (auto, no node_limit) is the same DAG.
  JobSpec auto_job = odd_group(EpDedup::kAuto);
  const Split a = coflow_bytes(generate(auto_job, 24), ".f.ep0.0.to");
  EXPECT_EQ(a.nvlink, s.nvlink);
  EXPECT_EQ(a.network, s.network);
}

TEST(EpComm, PerGpuSendsOneCopyToEachGpuHoldingAnExpert) {
  JobSpec job = odd_group(EpDedup::kPerGpu);
  const Dag dag = generate(job, 24);
  // A GPU holds 3 of 36 experts: a token's top-3 hits it with 1 - C(33,3)/C(36,3).
  const Bytes g = copies(1 - ratio(33, 36, 3));
  EXPECT_EQ(g, 235'854);
  const Split s = coflow_bytes(dag, ".f.ep0.0.to");
  EXPECT_EQ(s.flows, 132u);
  EXPECT_EQ(s.nvlink, 68 * g);
  EXPECT_EQ(s.network, 64 * g);
  // Fewer bytes than per expert copy: two of a token's experts on one GPU go once.
  EXPECT_LT(g, 250'000);
}

TEST(EpComm, PerNodeCrossesOncePerServerThenForwardsOverNvlink) {
  JobSpec job = odd_group(EpDedup::kPerNode);
  const Dag dag = generate(job, 24);
  const Bytes g = copies(1 - ratio(33, 36, 3));
  // Server 1's 4 members hold 12 experts, server 0's 8 hold 24.
  const Bytes to_server1 = copies(1 - ratio(24, 36, 3));
  const Bytes to_server0 = copies(1 - ratio(12, 36, 3));
  const Split s = coflow_bytes(dag, ".f.ep0.0.to");
  EXPECT_EQ(s.network, 8 * to_server1 + 4 * to_server0);
  // Local copies (8 x 7 + 4 x 3) and forwards: 3 per sender on server 0, 7 per sender on 1.
  EXPECT_EQ(s.nvlink, (56 + 12 + 8 * 3 + 4 * 7) * g);
  // The combine goes back the same way.
  const Split back = coflow_bytes(dag, ".f.ep0.0.back");
  EXPECT_EQ(back.network, s.network);
  EXPECT_EQ(back.nvlink, s.nvlink);
}

TEST(EpComm, NodeLimitComposesWithEachMode) {
  // M = 1 of N = 2 servers: a server is chosen with 1/2; the token's experts
  // are then drawn from that server's experts (24 on server 0, 12 on 1).
  const Bytes g0 = copies(0.5 * (1 - ratio(21, 24, 3)));  // a GPU on server 0
  const Bytes g1 = copies(0.5 * (1 - ratio(9, 12, 3)));   // a GPU on server 1
  JobSpec per_gpu = odd_group(EpDedup::kPerGpu, 1);
  const Split s = coflow_bytes(generate(per_gpu, 24), ".f.ep0.0.to");
  EXPECT_EQ(s.nvlink, 8 * 7 * g0 + 4 * 3 * g1);
  EXPECT_EQ(s.network, 8 * 4 * g1 + 4 * 8 * g0);
  JobSpec per_node = odd_group(EpDedup::kPerNode, 1);
  const Split n = coflow_bytes(generate(per_node, 24), ".f.ep0.0.to");
  EXPECT_EQ(n.network, 12 * copies(0.5));  // each sender, once to the other server
  EXPECT_EQ(n.nvlink, 8 * 7 * g0 + 4 * 3 * g1 + 8 * 3 * g1 + 4 * 7 * g0);
  // Per expert copy, uniform routing: the limit leaves the expected copies alone.
  JobSpec per_expert = odd_group(EpDedup::kPerExpert, 1);
  const Split e = coflow_bytes(generate(per_expert, 24), ".f.ep0.0.to");
  EXPECT_EQ(e.network, 64 * 250'000);
}

// Under node_limit a hot member's server is chosen more often: it receives
// more network bytes than without skew, in the default counting and per node.
TEST(EpComm, NodeLimitedSkewLoadsTheHotServersLinks) {
  for (const EpDedup mode : {EpDedup::kAuto, EpDedup::kPerNode}) {
    JobSpec uniform = odd_group(mode, 1);
    JobSpec hot = odd_group(mode, 1);
    hot.skew.hot_ratio = 4;  // member 0, on server 0
    const Dag a = generate(uniform, 24), b = generate(hot, 24);
    auto into_server0 = [](const Dag& dag) {
      Bytes in = 0;
      for (const Coflow& c : dag.coflows()) {
        if (c.name.find(".L2.") == std::string::npos || !c.name.ends_with(".f.ep0.0.to")) continue;
        for (const Flow& f : dag.flows_of(c)) {
          if (f.src / 8 != f.dst / 8 && f.dst / 8 == 0) in += f.bytes;
        }
        break;
      }
      return in;
    };
    // Member 0 gets 4, the other 11 (12 - 4) / 11 each: server 0's mean
    // weight is (4 + 7 x 8/11) / 8 = 1.136, server 1's 8/11.
    const double mean0 = (4.0 + 7.0 * 8.0 / 11.0) / 8.0;
    EXPECT_EQ(into_server0(b), 4 * copies(0.5 * mean0)) << static_cast<int>(mode);
    EXPECT_GT(into_server0(b), into_server0(a));
  }
}

TEST(EpComm, Fp8CarriesOneScalePer128Values) {
  JobSpec job = odd_group(EpDedup::kPerExpert);
  job.ep_comm.dtype_bytes[static_cast<std::size_t>(EpTransfer::kDispatch)] = 1;
  job.ep_comm.dtype_bytes[static_cast<std::size_t>(EpTransfer::kBackwardDispatch)] = 1;
  // 1000 values in FP8 and ceil(1000 / 128) = 8 fp32 scales: 1,032 B a token.
  EXPECT_EQ(ep_token_bytes(job, EpTransfer::kDispatch), 1'032u);
  EXPECT_EQ(ep_token_bytes(job, EpTransfer::kCombine), 2'000u);
  const Dag dag = generate(job, 24);
  const Bytes fp8 = 500 * 3 * 1'032 / 12;  // 129,000
  EXPECT_EQ(coflow_bytes(dag, ".f.ep0.0.to").network, 64 * fp8);
  EXPECT_EQ(coflow_bytes(dag, ".f.ep0.0.back").network, 64 * 250'000);  // combine stays BF16
  EXPECT_EQ(coflow_bytes(dag, ".b.ep0.0.to").network, 64 * fp8);
  EXPECT_EQ(coflow_bytes(dag, ".b.ep0.0.back").network, 64 * 250'000);
  JobTraffic t = job_traffic(job, dag, 8);
  EXPECT_EQ(t.ep_dispatch_per_gpu, 132 * fp8 / 12);
}

TEST(EpComm, SkewRaisesAHotGpusCopiesUpToOnePerToken) {
  JobSpec job = odd_group(EpDedup::kPerGpu);
  job.skew.hot_ratio = 5;  // member 0 gets 5x the mean: 5 x 0.2359 > 1, capped
  const Dag dag = generate(job, 24);
  int to_hot = 0;
  for (const Coflow& c : dag.coflows()) {
    if (c.name.find(".L2.") == std::string::npos || !c.name.ends_with(".f.ep0.0.to")) continue;
    for (const Flow& f : dag.flows_of(c)) {
      if (f.dst != 0) continue;
      EXPECT_EQ(f.bytes, copies(1.0));
      ++to_hot;
    }
    break;
  }
  EXPECT_EQ(to_hot, 11);
}

}  // namespace
}  // namespace shoal::work

namespace shoal::work {
namespace {

using namespace test_jobs;

/// Bytes each EP member receives in each forward dispatch of group 0, in
/// DAG order: one vector per (layer, micro-batch).
std::vector<std::vector<Bytes>> received_per_dispatch(const Dag& dag, std::uint32_t ep) {
  std::vector<std::vector<Bytes>> out;
  for (const Coflow& c : dag.coflows()) {
    if (c.labels.type != CoflowType::kEp || !c.name.ends_with(".f.ep0.0.to")) continue;
    std::vector<Bytes> got(ep, 0);
    for (const Flow& f : dag.flows_of(c)) got[f.dst] += f.bytes;
    out.push_back(std::move(got));
  }
  return out;
}

JobSpec many_layers(bool drift) {
  JobSpec j = small_moe();
  j.model.layers = 50;  // 49 MoE layers
  j.parallel.tp = 1;
  j.parallel.pp = 1;
  j.parallel.ep = 8;
  j.parallel.micro_batches = 4;
  j.skew.hot_ratio = 3;
  j.skew.drift = drift;
  j.skew.seed = 7;
  return j;
}

// Drift re-draws the hot member per layer and micro-batch: over 196 draws
// each of the 8 members is hot about equally often (chi-square below the
// 0.1% critical value, 24.32 for 7 degrees of freedom; the seed is fixed).
// Each draw still follows the law: one member at 3x, the rest at (8-3)/7.
TEST(EpSkew, DriftRedrawsTheHotMemberUniformly) {
  JobSpec drift = many_layers(true);
  const auto draws = received_per_dispatch(generate(drift, 8), 8);
  ASSERT_EQ(draws.size(), 49u * 4u);
  JobSpec fixed = many_layers(false);
  const auto static_draws = received_per_dispatch(generate(fixed, 8), 8);
  std::vector<int> hot(8, 0);
  std::vector<Bytes> law = static_draws.front();
  std::sort(law.begin(), law.end());
  for (std::size_t d = 0; d < draws.size(); ++d) {
    const auto& got = draws[d];
    ++hot[std::max_element(got.begin(), got.end()) - got.begin()];
    std::vector<Bytes> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, law) << "draw " << d;
    // Static: member 0 is always the hot one.
    EXPECT_EQ(
        std::max_element(static_draws[d].begin(), static_draws[d].end()) - static_draws[d].begin(),
        0);
  }
  const double expected = static_cast<double>(draws.size()) / 8;
  double chi2 = 0;
  for (const int h : hot) chi2 += (h - expected) * (h - expected) / expected;
  EXPECT_LT(chi2, 24.32);
  EXPECT_GT(*std::min_element(hot.begin(), hot.end()), 0);
}

// The experts' compute follows the same draw: the hot member's FFN is the
// longest of its layer and micro-batch.
TEST(EpSkew, DriftMovesTheHotComputeWithTheTraffic) {
  JobSpec job = many_layers(true);
  const Dag dag = generate(job, 8);
  std::size_t checked = 0;
  for (const Coflow& c : dag.coflows()) {
    if (c.labels.type != CoflowType::kEp || !c.name.ends_with(".f.ep0.0.to")) continue;
    if (checked == 12) break;
    std::vector<Bytes> got(8, 0);
    for (const Flow& f : dag.flows_of(c)) got[f.dst] += f.bytes;
    const std::uint32_t mb = c.labels.micro_batch, layer = c.labels.layer;
    const auto hot_member = std::max_element(got.begin(), got.end()) - got.begin();
    Time longest = 0;
    GpuId at = 0;
    for (const ComputeTask& t : dag.tasks()) {
      if (t.labels.kind != TaskKind::kForward || t.labels.micro_batch != mb ||
          t.labels.layer != layer || !t.name.ends_with(".f")) {
        continue;
      }
      if (t.duration > longest) {
        longest = t.duration;
        at = t.gpu;
      }
    }
    EXPECT_EQ(at, static_cast<GpuId>(hot_member)) << "layer " << layer << " micro-batch " << mb;
    ++checked;
  }
  EXPECT_EQ(checked, 12u);
}

}  // namespace
}  // namespace shoal::work
