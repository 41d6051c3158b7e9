// Credits added early (NetworkOptions::early_credits) must not change a run:
// every flow ends at the same picosecond as with a credit event each,
// from buffers too small for any credit to go early to buffers where nearly
// all do, under ECMP, spraying and adaptive routing, FIFO and round-robin
// switch queues, two switch classes, slowed, faster and failed links, and
// links of 1 us and of 50 ns.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "contending_dag.hpp"
#include "one_rank_run.hpp"
#include "shoal/net/network.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::net {
namespace {

using exec::Perturbations;

/// 2-tier leaf-spine, 64 GPUs, leaves 2:1 oversubscribed so that uplinks congest.
topo::Fabric leaf_spine(Time latency = kMicrosecond) {
  topo::FatTreeSpec spec;
  spec.base.link_latency = latency;
  spec.base.gpus = 64;
  spec.base.gpus_per_server = 1;
  spec.radix = 16;
  spec.leaf_oversubscription = 2;
  return topo::build_fat_tree(spec);
}

work::Dag contending() { return test::contending_dag(64, 40'000, 700'001); }

/// The last link from `from` to a switch (none: kNoLink).
topo::LinkId switch_link(const topo::Fabric& fabric, topo::NodeId from) {
  topo::LinkId found = topo::kNoLink;
  for (const topo::LinkId l : fabric.out_links(from))
    if (fabric.node(fabric.link(l).to).kind == topo::NodeKind::kSwitch) found = l;
  return found;
}
topo::LinkId nic_link(const topo::Fabric& fabric, work::GpuId g) {
  return switch_link(fabric, fabric.gpu_node(g));
}
/// A link from GPU g's leaf up to a spine.
topo::LinkId leaf_uplink(const topo::Fabric& fabric, work::GpuId g) {
  return switch_link(fabric, fabric.link(nic_link(fabric, g)).to);
}

/// Runs with every invariant checked after every batch, and the ports empty
/// with all credit back at the end.
test::OneRankRun run(const topo::Fabric& fabric, const work::Dag& dag,
                     const NetworkOptions& options, const Perturbations& perturbations,
                     const std::string& policy) {
  return test::run_policy(fabric, dag, options, perturbations, policy);
}

/// Runs with a credit event each, then with early credits: every flow must end
/// at the same time. Returns the events saved.
std::int64_t expect_same(const topo::Fabric& fabric, const work::Dag& dag, NetworkOptions options,
                         const Perturbations& perturbations, const std::string& policy) {
  options.early_credits = false;
  const test::OneRankRun events = run(fabric, dag, options, perturbations, policy);
  options.early_credits = true;
  const test::OneRankRun early = run(fabric, dag, options, perturbations, policy);
  EXPECT_EQ(early.results.flow_end.size(), dag.all_flows().size());
  EXPECT_EQ(early.results.flow_end, events.results.flow_end);
  EXPECT_LE(early.events, events.events);
  return events.events - early.events;
}

struct Case {
  const char* name;
  Bytes buffer;
  LoadBalancing balancing;
  bool round_robin;
  const char* policy;
  bool perturbed;
};

TEST(EarlyCredits, RunsAreTheSameAsWithACreditEventEach) {
  const topo::Fabric fabric = leaf_spine();
  const work::Dag dag = contending();
  Perturbations slowed;
  // A NIC slowed to a quarter, a leaf uplink 3 us longer, one made faster.
  slowed.links.push_back({nic_link(fabric, 3), 20 * kMicrosecond, 25'000'000'000, 0, false});
  slowed.links.push_back({leaf_uplink(fabric, 40), 0, 0, 3 * kMicrosecond, false});
  slowed.links.push_back({leaf_uplink(fabric, 17), 10 * kMicrosecond, 200'000'000'000, 0, false});
  const std::array<Case, 8> cases{{
      {"two cells of buffer", 8 * 1024, LoadBalancing::kEcmp, true, "fair", false},
      {"24 KiB", 24 * 1024, LoadBalancing::kEcmp, true, "fair", false},
      {"64 KiB, hermod", 64 * 1024, LoadBalancing::kEcmp, true, "hermod", false},
      {"64 KiB, FIFO", 64 * 1024, LoadBalancing::kEcmp, false, "fair", false},
      {"512 KiB", 512 * 1024, LoadBalancing::kEcmp, true, "hermod", false},
      {"48 KiB, spray", 48 * 1024, LoadBalancing::kSpray, true, "hermod", false},
      {"48 KiB, adaptive", 48 * 1024, LoadBalancing::kAdaptive, true, "fair", false},
      {"32 KiB, slowed links", 32 * 1024, LoadBalancing::kEcmp, true, "hermod", true},
  }};
  std::int64_t saved_most = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    NetworkOptions options;
    options.buffer_per_class = c.buffer;
    options.load_balancing = c.balancing;
    options.switch_round_robin = c.round_robin;
    const std::int64_t saved =
        expect_same(fabric, dag, options, c.perturbed ? slowed : Perturbations{}, c.policy);
    if (c.buffer == 8 * 1024) {
      EXPECT_EQ(saved, 0);  // never a cell to spare
    } else {
      EXPECT_GT(saved, 0);
    }
    saved_most = std::max(saved_most, saved);
  }
  // Where buffers are ample, most credits went without their event.
  EXPECT_GT(saved_most, 10'000);
}

TEST(EarlyCredits, AFailedLinkKeepsItsCreditEvents) {
  const topo::Fabric fabric = leaf_spine();
  const work::Dag dag = contending();
  Perturbations failed;
  const topo::LinkId uplink = leaf_uplink(fabric, 0);
  ASSERT_NE(uplink, topo::kNoLink);
  failed.links.push_back({uplink, 30 * kMicrosecond, 0, 0, true});
  for (const LoadBalancing balancing : {LoadBalancing::kEcmp, LoadBalancing::kAdaptive}) {
    NetworkOptions options;
    options.load_balancing = balancing;
    EXPECT_GT(expect_same(fabric, dag, options, failed, "fair"), 0);
  }
  // The same link failing only once every flow has ended: the same run as
  // with no failure, but its port keeps all its credit events, so fewer go.
  Perturbations late;
  late.links.push_back({uplink, kMillisecond, 0, 0, true});
  const test::OneRankRun unfailed = run(fabric, dag, {}, {}, "fair");
  const test::OneRankRun failed_late = run(fabric, dag, {}, late, "fair");
  ASSERT_LT(*std::max_element(unfailed.results.flow_end.begin(), unfailed.results.flow_end.end()),
            kMillisecond);
  EXPECT_EQ(failed_late.results.flow_end, unfailed.results.flow_end);
  EXPECT_GT(expect_same(fabric, dag, {}, {}, "fair"), expect_same(fabric, dag, {}, late, "fair"));
}

// With 50 ns links a credit is due soon after its cell leaves, so the margin
// for what the port sends meanwhile is small next to the credit added early
// and not yet due: the bound must count that too.
TEST(EarlyCredits, ShortLinksAndTightBuffers) {
  const topo::Fabric fabric = leaf_spine(50 * kNanosecond);
  const work::Dag dag = contending();
  // Half the NICs four times faster than the fabric drains them: ports that
  // held credit to spare can spend it within one credit's delay.
  Perturbations fast_nics;
  for (work::GpuId g = 0; g < 64; g += 2)
    fast_nics.links.push_back({nic_link(fabric, g), 0, 400'000'000'000, 0, false});
  for (const Bytes kib : {12, 14, 16, 20, 24, 32, 48}) {
    for (const char* policy : {"fair", "hermod"}) {
      for (const bool fast : {false, true}) {
        SCOPED_TRACE(std::to_string(kib) + " KiB, " + policy + (fast ? ", fast NICs" : ""));
        NetworkOptions options;
        options.buffer_per_class = kib * 1024;
        EXPECT_GT(expect_same(fabric, dag, options, fast ? fast_nics : Perturbations{}, policy), 0);
      }
    }
  }
}

}  // namespace
}  // namespace shoal::net
