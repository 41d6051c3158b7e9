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
    const FlowPriorities p = flow_priorities(dag, two_gpus(), config);
    for (std::uint32_t f = 0; f < 8; ++f) {
      EXPECT_EQ(p.key[f], f);
      EXPECT_EQ(p.cls[f], f * static_cast<std::uint32_t>(classes) / 8) << classes << " classes";
    }
  }
  config.classes = 2;
  config.enforce = Enforcement::kNic;
  FlowPriorities nic = flow_priorities(dag, two_gpus(), config);
  EXPECT_EQ(nic.key[5], 5u);
  EXPECT_EQ(nic.cls[5], 0);
  config.enforce = Enforcement::kSwitch;
  FlowPriorities sw = flow_priorities(dag, two_gpus(), config);
  EXPECT_EQ(sw.key[5], 1u);  // the NIC sees only the class
  EXPECT_EQ(sw.cls[5], 1);
  config.classes = 3;
  EXPECT_TRUE(Has(error_of([&] { flow_priorities(dag, two_gpus(), config); }),
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

/// Panel 1 on a 2-GPU single switch (100 ns per link): the milestone times.
struct PanelTimes {
  Time mb1_can_compute, mb2_can_compute, dp_n_minus_1_done, phase_end, last_byte;
};

PanelTimes run_panel(const work::CaseIiPanel& panel, std::string_view policy,
                     BitsPerSecond rate = 400'000'000'000) {
  topo::FabricSpec spec;
  spec.gpus = 2;
  spec.gpus_per_server = 1;
  spec.link_rate = rate;
  spec.link_latency = 100 * kNanosecond;
  const topo::Fabric fabric = topo::build_single_switch(spec);
  work::Dag dag;
  work::add_case_ii_panel(panel, dag);
  PolicyConfig config;
  parse_policy_name(policy, config);
  const core::Comm comm = core::Comm::self();
  const core::Partition partition = topo::partition_fabric(fabric, 1, "block");
  core::EngineOptions engine;
  engine.progress = false;
  core::Simulator sim(comm, fabric.layout(), partition, engine);
  net::Network network(fabric, dag, sim, net::NetworkOptions{}, {},
                       flow_priorities(dag, fabric, config));
  network.initialize();
  sim.run(network);
  const net::RunResults r = network.results(comm);
  auto coflow_end = [&](std::string_view name) {
    const work::Coflow& c = dag.coflows()[dag.find(name)->index];
    return r.flow_end[c.first_flow];  // one flow each
  };
  PanelTimes t{};
  t.mb1_can_compute = coflow_end("pp-mb1");
  t.mb2_can_compute = coflow_end("pp-mb2");
  t.dp_n_minus_1_done = coflow_end("dp-layer-n-1");
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

}  // namespace
}  // namespace shoal::sched
