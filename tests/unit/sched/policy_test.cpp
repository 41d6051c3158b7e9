// Coflow policies: the keys each policy gives, the folding into switch
// classes, and the digest's Panel 1 (one Case II moment on one link) run on the
// packet network against times derived by hand (docs/policies.md).
#include "shoal/sched/policy.hpp"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "one_rank_run.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/net/network.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_config.hpp"
#include "shoal/work/case_ii_panel.hpp"

namespace shoal::sched {
namespace {

using test::error_of;
using test::Has;
using work::CoflowType;

/// One flow per coflow between GPUs 0 and 1, with the given labels.
work::Dag labelled(const std::vector<work::CoflowLabels>& labels) {
  work::Dag dag;
  const std::array<work::Flow, 1> flow{work::Flow{0, 1, 1000}};
  for (std::size_t i = 0; i < labels.size(); ++i) {
    dag.add_coflow("c" + std::to_string(i), labels[i], 0, flow, {});
  }
  dag.resolve();
  return dag;
}

work::CoflowLabels label(CoflowType type, std::uint32_t mb, std::uint32_t layer,
                         std::uint32_t iteration = 0, std::uint32_t job = 0) {
  work::CoflowLabels l;
  l.type = type;
  l.micro_batch = mb;
  l.layer = layer;
  l.iteration = iteration;
  l.job = job;
  return l;
}

topo::Fabric two_gpus() {
  topo::FabricSpec spec;
  spec.gpus = 2;
  spec.gpus_per_server = 1;
  return topo::build_single_switch(spec);
}

std::vector<std::uint32_t> keys_of(const work::Dag& dag, std::string_view policy,
                                   bool iteration_first = false) {
  PolicyConfig config;
  parse_policy_name(policy, config);
  config.iteration_first = iteration_first;
  return coflow_keys(dag, two_gpus(), config);
}

TEST(Policy, FigureCOrderUnderHermod) {
  // The digest's Figure C: DP L8, EP mb2 L6, DP L7, PP mb1 L5 in arrival order;
  // Hermod serves PP mb1 L5, EP mb2 L6, DP L7, DP L8 (DP carries the last MID, 2).
  const work::Dag dag = labelled({label(CoflowType::kDp, 0, 8), label(CoflowType::kEp, 2, 6),
                                  label(CoflowType::kDp, 0, 7), label(CoflowType::kPp, 1, 5)});
  EXPECT_EQ(keys_of(dag, "hermod"), (std::vector<std::uint32_t>{3, 1, 2, 0}));
}

TEST(Policy, TypeRulesOfFairLinaAndEpPpFirst) {
  const work::Dag dag = labelled({label(CoflowType::kEp, 0, 1), label(CoflowType::kPp, 0, 1),
                                  label(CoflowType::kDp, 0, 1), label(CoflowType::kOther, 0, 1)});
  EXPECT_EQ(keys_of(dag, "fair"), (std::vector<std::uint32_t>{0, 0, 0, 0}));
  EXPECT_EQ(keys_of(dag, "lina"), (std::vector<std::uint32_t>{0, 1, 1, 1}));
  EXPECT_EQ(keys_of(dag, "ep-pp-first"), (std::vector<std::uint32_t>{0, 0, 1, 1}));
}

TEST(Policy, HermodDpKeyAndIterationFirst) {
  // Iteration 0 has micro-batches 0..3; its DP of layer 2 keys as MID 3, behind
  // micro-batch 3's EP and ahead of iteration 1's micro-batch-0... only with
  // iteration_first (MIDs are per iteration).
  const work::Dag dag =
      labelled({label(CoflowType::kEp, 3, 1, 0), label(CoflowType::kDp, 0, 2, 0),
                label(CoflowType::kEp, 0, 1, 1), label(CoflowType::kEp, 0, 1, 0)});
  // Without the iteration: (3,0,1) (3,1,2) (0,0,1) (0,0,1): both MID-0 EPs tie.
  EXPECT_EQ(keys_of(dag, "hermod"), (std::vector<std::uint32_t>{1, 2, 0, 0}));
  // With it: (0,3,0,1) (0,3,1,2) (1,0,0,1) (0,0,0,1).
  EXPECT_EQ(keys_of(dag, "hermod", true), (std::vector<std::uint32_t>{1, 2, 3, 0}));
  PolicyConfig own_label;
  parse_policy_name("hermod", own_label);
  own_label.dp_last_micro_batch = false;  // the DP keeps its label, MID 0: first
  EXPECT_EQ(coflow_keys(dag, two_gpus(), own_label), (std::vector<std::uint32_t>{2, 1, 0, 0}));
}

TEST(Policy, FoldingKeepsOrderBetweenClassesAndEnforcementChoosesWhere) {
  std::vector<work::CoflowLabels> labels;
  for (std::uint32_t mb = 0; mb < 8; ++mb) labels.push_back(label(CoflowType::kEp, mb, 1));
  const work::Dag dag = labelled(labels);  // 8 distinct keys under hermod
  PolicyConfig config;
  parse_policy_name("hermod", config);
  for (const int classes : {1, 2, 4, 8}) {
    config.classes = classes;
    const CoflowPriorities p = coflow_priorities(dag, two_gpus(), config);
    for (std::uint32_t c = 0; c < 8; ++c) {
      EXPECT_EQ(p.key[c], c);
      EXPECT_EQ(p.cls[c], c * static_cast<std::uint32_t>(classes) / 8) << classes << " classes";
    }
  }
  config.classes = 2;
  config.enforce = Enforcement::kNic;
  CoflowPriorities nic = coflow_priorities(dag, two_gpus(), config);
  EXPECT_EQ(nic.key[5], 5u);
  EXPECT_EQ(nic.cls[5], 0);
  config.enforce = Enforcement::kSwitch;
  CoflowPriorities sw = coflow_priorities(dag, two_gpus(), config);
  EXPECT_EQ(sw.key[5], 1u);  // the NIC sees only the class
  EXPECT_EQ(sw.cls[5], 1);
  config.classes = 3;
  EXPECT_TRUE(Has(error_of([&] { coflow_priorities(dag, two_gpus(), config); }),
                  "policy.classes must be 1, 2, 4 or 8"));
}

TEST(Policy, CruxRanksJobsByGpuIntensity) {
  // Job 0: 1 MB per GPU and 10 us of compute; job 1: 1 MB per GPU and 1 ms of
  // compute: job 1 is the more GPU-intensive, so it goes first.
  topo::FabricSpec spec;
  spec.gpus = 4;
  spec.gpus_per_server = 1;
  const topo::Fabric fabric = topo::build_single_switch(spec);
  work::Dag dag;
  const std::array<work::Flow, 1> a{work::Flow{0, 1, 1'000'000}};
  const std::array<work::Flow, 1> b{work::Flow{2, 3, 1'000'000}};
  dag.add_coflow("job0", label(CoflowType::kDp, 0, 1, 0, 0), 0, a, {});
  dag.add_coflow("job1", label(CoflowType::kDp, 0, 1, 0, 1), 0, b, {});
  dag.add_task("t0", 0, 10'000'000, {});
  dag.add_task("t1", 2, 1'000'000'000, {});
  dag.resolve();
  PolicyConfig config;
  parse_policy_name("crux+hermod", config);
  EXPECT_EQ(coflow_keys(dag, fabric, config), (std::vector<std::uint32_t>{1, 0}));
  parse_policy_name("fair", config);
  EXPECT_EQ(coflow_keys(dag, fabric, config), (std::vector<std::uint32_t>{0, 0}));
  EXPECT_TRUE(Has(error_of([&] { parse_policy_name("sjf", config); }), "unknown policy \"sjf\""));
}

/// Runs `dag` on a single switch of `gpus` GPUs (100 ns per link) under `policy`.
exec::RunResults run_dag(const work::Dag& dag, const PolicyConfig& config,
                         BitsPerSecond rate = 400'000'000'000, work::GpuId gpus = 2,
                         Time starvation_after = kTimeInfinity) {
  topo::FabricSpec spec;
  spec.gpus = gpus;
  spec.gpus_per_server = 1;
  spec.link_rate = rate;
  spec.link_latency = 100 * kNanosecond;
  const topo::Fabric fabric = topo::build_single_switch(spec);
  net::NetworkOptions options;
  options.starvation_after = starvation_after;
  return test::run_one_rank(fabric, dag, options, {}, test::priorities_of(dag, fabric, config))
      .results;
}

exec::RunResults run_dag(const work::Dag& dag, std::string_view policy,
                         BitsPerSecond rate = 400'000'000'000) {
  PolicyConfig config;
  parse_policy_name(policy, config);
  return run_dag(dag, config, rate);
}

/// A coflow's end: its last flow's.
Time end_of(const work::Dag& dag, const exec::RunResults& r, std::string_view name) {
  const work::Coflow& c = dag.coflows()[dag.find(name)->index];
  Time end = -1;
  for (std::uint32_t i = 0; i < c.flow_count; ++i)
    end = std::max(end, r.flow_end[c.first_flow + i]);
  return end;
}

/// Panel 1 on a 2-GPU single switch: the milestone times.
struct PanelTimes {
  Time mb1_can_compute, mb2_can_compute, dp_n_minus_1_done, phase_end, last_byte;
};

PanelTimes run_panel(const work::CaseIiPanel& panel, std::string_view policy,
                     BitsPerSecond rate = 400'000'000'000) {
  work::Dag dag;
  work::add_case_ii_panel(panel, dag);
  const exec::RunResults r = run_dag(dag, policy, rate);
  PanelTimes t{};
  t.mb1_can_compute = end_of(dag, r, "pp-mb1");
  t.mb2_can_compute = end_of(dag, r, "pp-mb2");
  t.dp_n_minus_1_done = end_of(dag, r, "dp-layer-n-1");
  for (const Time end : r.flow_end) t.last_byte = std::max(t.last_byte, end);
  t.phase_end = t.last_byte;
  for (const Time end : r.task_end) t.phase_end = std::max(t.phase_end, end);
  return t;
}

void expect_within(Time got, double expected_us, const std::string& what) {
  const double got_us = static_cast<double>(got) / 1e6;
  EXPECT_NEAR(got_us, expected_us, expected_us * 0.005) << what;
}

void expect_panel(const PanelTimes& t, const std::array<double, 5>& us, const std::string& policy) {
  expect_within(t.mb1_can_compute, us[0], policy + ": micro-batch 1 can compute");
  expect_within(t.mb2_can_compute, us[1], policy + ": micro-batch 2 can compute");
  expect_within(t.dp_n_minus_1_done, us[2], policy + ": DP of layer n-1 done");
  expect_within(t.phase_end, us[3], policy + ": phase end");
  expect_within(t.last_byte, us[4], policy + ": last byte");
}

// Size set 1, the config's defaults: EP 32 MB, PP 6 MB, DP 128 MB, 3 ms of
// compute, 400 Gb/s (50 MB/ms: EP 640 us, PP 120 us, DP 2,560 us on the link
// alone; 6,640 us in all). By hand (docs/policies.md):
//   fair: EP1, EP2, DPn, DPn-1 at 1/4 each: EPs done at 2,560 (DPs 32 MB in);
//     PPs and DPs at 1/4: PPs done at 3,040; computes 3,040-6,040-9,040;
//     DPs (90 MB left each) at 1/2: 6,640.
//   lina: EPs at 1/2: 1,280; PPs, DPs at 1/4: PPs at 1,760; computes end 7,760.
//   ep-pp-first: EPs 1,280; PPs at 1/2: 1,520; computes end 7,520; DPs share: 6,640.
//   hermod: EP1 0-640, PP1 -760, EP2 -1,400, PP2 -1,520, DPn-1 -4,080, DPn -6,640;
//     computes 760-3,760-6,760.
TEST(PanelOne, DefaultSizesMatchTheHandDerivation) {
  const work::CaseIiPanel panel;
  expect_panel(run_panel(panel, "fair"), {3040, 3040, 6640, 9040, 6640}, "fair");
  expect_panel(run_panel(panel, "lina"), {1760, 1760, 6640, 7760, 6640}, "lina");
  expect_panel(run_panel(panel, "ep-pp-first"), {1520, 1520, 6640, 7520, 6640}, "ep-pp-first");
  expect_panel(run_panel(panel, "hermod"), {760, 1520, 4080, 6760, 6640}, "hermod");
}

// Size set 2: EP 16 MB, PP 6 MB, DP 32 MB, 500 us of compute (EP 320, PP 120,
// DP 640 us alone; 2,160 us in all).
//   fair: EPs at 1/4: 1,280 (DPs 16 MB in); PPs at 1/4: 1,760 (DPs 10 MB left);
//     DPs at 1/2: 2,160; computes 1,760-2,260-2,760.
//   lina: EPs at 1/2: 640; PPs at 1/4: 1,120; DPs (26 MB left) at 1/2: 2,160;
//     computes 1,120-1,620-2,120: the phase ends with the last byte.
//   ep-pp-first: EPs 640, PPs at 1/2 880, DPs 2,160; computes end 1,880.
//   hermod: EP1 -320, PP1 -440, EP2 -760, PP2 -880, DPn-1 -1,520, DPn -2,160.
TEST(PanelOne, SmallerSizesMatchTheHandDerivation) {
  work::CaseIiPanel panel;
  panel.ep_bytes = 16'000'000;
  panel.dp_bytes = 32'000'000;
  panel.compute = 500 * kMicrosecond;
  expect_panel(run_panel(panel, "fair"), {1760, 1760, 2160, 2760, 2160}, "fair");
  expect_panel(run_panel(panel, "lina"), {1120, 1120, 2160, 2160, 2160}, "lina");
  expect_panel(run_panel(panel, "ep-pp-first"), {880, 880, 2160, 2160, 2160}, "ep-pp-first");
  expect_panel(run_panel(panel, "hermod"), {440, 880, 1520, 2160, 2160}, "hermod");
}

// The caption's claims. With 1 ms of compute the link is busy for the whole
// phase: every order ends with the last byte. At 800 Gb/s the gap to fair
// share shrinks but stays.
TEST(PanelOne, CaptionClaims) {
  work::CaseIiPanel short_compute;
  short_compute.compute = kMillisecond;
  for (const std::string_view policy : {"fair", "lina", "ep-pp-first", "hermod"}) {
    const PanelTimes t = run_panel(short_compute, policy);
    EXPECT_EQ(t.phase_end, t.last_byte) << policy;
  }
  const work::CaseIiPanel panel;
  for (const std::string_view policy : {"lina", "ep-pp-first", "hermod"}) {
    const Time gap_400 = run_panel(panel, "fair").phase_end - run_panel(panel, policy).phase_end;
    const Time gap_800 = run_panel(panel, "fair", 800'000'000'000).phase_end -
                         run_panel(panel, policy, 800'000'000'000).phase_end;
    EXPECT_GT(gap_800, 0) << policy;
    EXPECT_LT(gap_800, gap_400) << policy;
  }
}

/// Adds a one-flow coflow from GPU `src` to GPU `dst`.
void coflow(work::Dag& dag, const std::string& name, const work::CoflowLabels& l, Bytes bytes,
            std::vector<std::string> after = {}, work::GpuId src = 0, work::GpuId dst = 1) {
  const std::array<work::Flow, 1> flow{work::Flow{src, dst, bytes}};
  dag.add_coflow(name, l, 0, flow, std::move(after));
}

// Figure B, Case I: two micro-batches' EP and PP contend (EP 8 MB = 160 us, PP
// 4 MB = 80 us at 400 Gb/s). Hermod: e1 0-160, p1 -240, e2 -400, p2 -480.
// Fair: e1 and e2 share to 320, p1 and p2 share to 480.
TEST(OverlapCases, CaseIMicroBatchOneFirst) {
  work::Dag dag;
  coflow(dag, "e1", label(CoflowType::kEp, 0, 3), 8'000'000);
  coflow(dag, "p1", label(CoflowType::kPp, 0, 3), 4'000'000, {"e1"});
  coflow(dag, "e2", label(CoflowType::kEp, 1, 3), 8'000'000);
  coflow(dag, "p2", label(CoflowType::kPp, 1, 3), 4'000'000, {"e2"});
  dag.resolve();
  const exec::RunResults hermod = run_dag(dag, "hermod");
  expect_within(end_of(dag, hermod, "e1"), 160, "hermod e1");
  expect_within(end_of(dag, hermod, "p1"), 240, "hermod p1");
  expect_within(end_of(dag, hermod, "e2"), 400, "hermod e2");
  expect_within(end_of(dag, hermod, "p2"), 480, "hermod p2");
  const exec::RunResults fair = run_dag(dag, "fair");
  expect_within(end_of(dag, fair, "e1"), 320, "fair e1");
  expect_within(end_of(dag, fair, "e2"), 320, "fair e2");
  expect_within(end_of(dag, fair, "p1"), 480, "fair p1");
}

// Case II: micro-batch EP/PP against the DP of the last layers (DP 16 MB = 320
// us each). Hermod: e1 -160, p1 -240, e2 -400, p2 -480, then dn-1 -800, dn
// -1,120. Fair: four flows at 1/4: e1, e2 at 640; p1, p2 (with both DPs, 8 MB
// left each) at 960; the DPs (4 MB left each) at 1,120.
TEST(OverlapCases, CaseIiEpAndPpBeforeDp) {
  work::Dag dag;
  coflow(dag, "e1", label(CoflowType::kEp, 0, 3), 8'000'000);
  coflow(dag, "p1", label(CoflowType::kPp, 0, 3), 4'000'000, {"e1"});
  coflow(dag, "e2", label(CoflowType::kEp, 1, 3), 8'000'000);
  coflow(dag, "p2", label(CoflowType::kPp, 1, 3), 4'000'000, {"e2"});
  coflow(dag, "dn", label(CoflowType::kDp, 1, 3), 16'000'000);
  coflow(dag, "dn-1", label(CoflowType::kDp, 1, 2), 16'000'000);
  dag.resolve();
  const exec::RunResults hermod = run_dag(dag, "hermod");
  expect_within(end_of(dag, hermod, "p1"), 240, "hermod p1");
  expect_within(end_of(dag, hermod, "p2"), 480, "hermod p2");
  expect_within(end_of(dag, hermod, "dn-1"), 800, "hermod dn-1");
  expect_within(end_of(dag, hermod, "dn"), 1120, "hermod dn");
  const exec::RunResults fair = run_dag(dag, "fair");
  expect_within(end_of(dag, fair, "e1"), 640, "fair e1");
  expect_within(end_of(dag, fair, "p2"), 960, "fair p2");
  expect_within(end_of(dag, fair, "dn-1"), 1120, "fair dn-1");
}

// Case III: at the iteration edge, this iteration's DP of layers 2 and 1 (16
// MB each) and the next iteration's layer-1 EP and PP (8 MB, 4 MB), which wait
// for d1's parameters. Hermod: d1 -320, e' -480, p' -560, d2 -880 (e' and p'
// carry MID 0, before the DPs' MID 3). Fair: d1 and d2 share to 640, then e'
// -800 and p' -880.
TEST(OverlapCases, CaseIiiLowerLayerFirst) {
  work::Dag dag;
  coflow(dag, "ep-mb", label(CoflowType::kEp, 3, 2, 0), 1000, {}, 0, 2);  // iteration 0, MID 3
  coflow(dag, "d2", label(CoflowType::kDp, 3, 2, 0), 16'000'000);
  coflow(dag, "d1", label(CoflowType::kDp, 3, 1, 0), 16'000'000);
  coflow(dag, "e'", label(CoflowType::kEp, 0, 1, 1), 8'000'000, {"d1"});
  coflow(dag, "p'", label(CoflowType::kPp, 0, 1, 1), 4'000'000, {"e'"});
  dag.resolve();
  PolicyConfig config;
  parse_policy_name("hermod", config);
  const exec::RunResults hermod = run_dag(dag, config, 400'000'000'000, 3);
  expect_within(end_of(dag, hermod, "d1"), 320, "hermod d1");
  expect_within(end_of(dag, hermod, "e'"), 480, "hermod e'");
  expect_within(end_of(dag, hermod, "p'"), 560, "hermod p'");
  expect_within(end_of(dag, hermod, "d2"), 880, "hermod d2");
  parse_policy_name("fair", config);
  const exec::RunResults fair = run_dag(dag, config, 400'000'000'000, 3);
  expect_within(end_of(dag, fair, "d1"), 640, "fair d1");
  expect_within(end_of(dag, fair, "p'"), 880, "fair p'");
}

// Switch enforcement: GPUs 0 and 1 send EP (8 MB) and DP (8 MB) to GPU 2; they
// meet only at the switch's port to GPU 2, so only switch classes can order
// them. Lina with switch classes: EP at 160 us, DP at 320. NIC-only
// enforcement, or one class: fair at the switch, both at 320.
TEST(Enforcement, SwitchClassesOrderWhatMeetsInTheSwitch) {
  work::Dag dag;
  coflow(dag, "ep", label(CoflowType::kEp, 0, 1), 8'000'000, {}, 0, 2);
  coflow(dag, "dp", label(CoflowType::kDp, 0, 1), 8'000'000, {}, 1, 2);
  dag.resolve();
  PolicyConfig config;
  parse_policy_name("lina", config);
  for (const Enforcement where : {Enforcement::kBoth, Enforcement::kSwitch}) {
    config.enforce = where;
    const exec::RunResults r = run_dag(dag, config, 400'000'000'000, 3);
    expect_within(end_of(dag, r, "ep"), 160, "switch classes: ep");
    expect_within(end_of(dag, r, "dp"), 320, "switch classes: dp");
  }
  config.enforce = Enforcement::kNic;
  expect_within(end_of(dag, run_dag(dag, config, 400'000'000'000, 3), "ep"), 320, "NIC only: ep");
  config.enforce = Enforcement::kBoth;
  config.classes = 1;
  expect_within(end_of(dag, run_dag(dag, config, 400'000'000'000, 3), "ep"), 320, "one class: ep");
}

// The starvation guard: under lina a 32 MB EP (640 us) holds back an 8 MB DP
// (160 us) from one NIC. Unserved for 300 us, the DP is promoted and goes first
// (in class 0 all the way): done at 460 us, the EP at 800 (it waits 160 us, less
// than the threshold, so it is not promoted in turn). Without the guard: EP
// 640, DP 800.
TEST(Enforcement, StarvationGuardPromotesAWaitingFlow) {
  work::Dag dag;
  coflow(dag, "ep", label(CoflowType::kEp, 0, 1), 32'000'000);
  coflow(dag, "dp", label(CoflowType::kDp, 0, 1), 8'000'000);
  dag.resolve();
  PolicyConfig config;
  parse_policy_name("lina", config);
  const exec::RunResults plain = run_dag(dag, config);
  expect_within(end_of(dag, plain, "ep"), 640, "no guard: ep");
  expect_within(end_of(dag, plain, "dp"), 800, "no guard: dp");
  const exec::RunResults guarded = run_dag(dag, config, 400'000'000'000, 2, 300 * kMicrosecond);
  expect_within(end_of(dag, guarded, "dp"), 460, "guard: dp");
  expect_within(end_of(dag, guarded, "ep"), 800, "guard: ep");
}

}  // namespace
}  // namespace shoal::sched
