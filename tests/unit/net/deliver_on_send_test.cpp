// A cell counted as it is sent on its last link (NetworkOptions::deliver_on_send)
// must not change a run: every flow and task starts and ends at the same
// picosecond as with a cell-head event at the receiver, the same bytes arrive
// over the same cell-hops, and only events go. Across fabrics whose last links
// differ (a switch, an NVSwitch, a relaying GPU's NVLink under PXN, a NIC with
// two ports), routing, queueing, policies, slowed and failed links, compute
// waiting on coflows, and a run cut off at its end time.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contending_dag.hpp"
#include "one_rank_run.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/net/network.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::net {
namespace {

using exec::Perturbations;

/// With compute on every GPU after the ring, which may end as a flow does.
work::Dag contending(work::GpuId gpus) {
  return test::contending_dag(gpus, 30'000, 500'001, 3 * kMicrosecond);
}

/// Runs with a cell-head event at every receiver, then delivering on send:
/// the same run, with no more events. Returns the events saved.
std::int64_t expect_same(const topo::Fabric& fabric, const work::Dag& dag,
                         const NetworkOptions& options = {},
                         const Perturbations& perturbations = {},
                         const std::string& policy = "fair", Time end_time = kTimeInfinity) {
  return test::events_saved_by(&NetworkOptions::deliver_on_send, fabric, dag, options,
                               perturbations, policy, end_time);
}

topo::Fabric leaf_spine(std::uint32_t gpus_per_server) {
  return test::contending_leaf_spine(gpus_per_server);
}

/// The link from `from` to `to` (by node), which must exist.
topo::LinkId link_between(const topo::Fabric& fabric, topo::NodeId from, topo::NodeId to) {
  const topo::LinkId l = fabric.find_link(from, to);
  EXPECT_NE(l, topo::kNoLink);
  return l;
}

TEST(DeliverOnSend, RunsAreTheSameOnALeafSpine) {
  const topo::Fabric fabric = leaf_spine(1);
  const work::Dag dag = contending(64);
  struct Case {
    const char* name;
    Bytes buffer;
    LoadBalancing balancing;
    bool round_robin;
    const char* policy;
  };
  const Case cases[] = {
      {"two cells of buffer", 8 * 1024, LoadBalancing::kEcmp, true, "fair"},
      {"64 KiB, hermod", 64 * 1024, LoadBalancing::kEcmp, true, "hermod"},
      {"64 KiB, FIFO", 64 * 1024, LoadBalancing::kEcmp, false, "fair"},
      {"48 KiB, spray", 48 * 1024, LoadBalancing::kSpray, true, "hermod"},
      {"48 KiB, adaptive", 48 * 1024, LoadBalancing::kAdaptive, true, "fair"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    NetworkOptions options;
    options.buffer_per_class = c.buffer;
    options.load_balancing = c.balancing;
    options.switch_round_robin = c.round_robin;
    const std::int64_t saved = expect_same(fabric, dag, options, {}, c.policy);
    if (c.buffer == 8 * 1024) {
      EXPECT_EQ(saved, 0);  // no credit ever goes early, so every cell keeps its event
    } else {
      // All but a flow's last cell, where the leaf's down link keeps credit to spare.
      EXPECT_GT(saved, 1'000);
    }
  }
}

TEST(DeliverOnSend, SlowedAndFailedLastLinks) {
  const topo::Fabric fabric = leaf_spine(1);
  const work::Dag dag = contending(64);
  const topo::NodeId gpu3 = fabric.gpu_node(3);
  const topo::NodeId leaf = fabric.link(fabric.nic_links(3).front()).to;
  Perturbations perturbations;
  // GPU 3's down link slowed to a quarter and 2 us longer from 20 us; a spine
  // link failed at 30 us (its cells re-routed on).
  perturbations.links.push_back(
      {link_between(fabric, leaf, gpu3), 20 * kMicrosecond, 25'000'000'000, 2 * kMicrosecond});
  const topo::LinkId uplink = fabric.out_links(leaf).back();
  perturbations.links.push_back({uplink, 30 * kMicrosecond, 0, 0, true});
  for (const Bytes buffer : {Bytes{8 * 1024}, Bytes{512 * 1024}}) {  // credits gate, or not
    for (const char* policy : {"fair", "hermod"}) {
      SCOPED_TRACE(std::string(policy) + ", " + std::to_string(buffer) + " B of buffer");
      NetworkOptions options;
      options.buffer_per_class = buffer;
      const std::int64_t saved = expect_same(fabric, dag, options, perturbations, policy);
      if (buffer == 8 * 1024) {
        EXPECT_EQ(saved, 0);  // no credit ever goes early, so every cell keeps its event
      } else {
        EXPECT_GT(saved, 0);
      }
    }
  }
}

TEST(DeliverOnSend, NvSwitchMultiPlaneAndDualPlaneFabrics) {
  const work::Dag dag = contending(64);
  {
    SCOPED_TRACE("fat tree, 8 GPUs a server: NVSwitch and leaf deliver");
    EXPECT_GT(expect_same(leaf_spine(8), dag, NetworkOptions{}), 1'000);
  }
  {
    SCOPED_TRACE("multi-plane: a relaying GPU's NVLink carries cells it does not receive");
    EXPECT_GT(expect_same(test::contending_multi_plane(), dag, NetworkOptions{}, {}, "hermod"),
              1'000);
  }
  {
    SCOPED_TRACE("dual-plane rail: a NIC's two ports keep their events, NVSwitch delivers");
    const topo::Fabric fabric = test::contending_dual_plane_rail();
    EXPECT_GT(expect_same(fabric, dag, NetworkOptions{}), 0);
    // Between servers only, every cell arrives by one of a NIC's two ports:
    // not one event goes.
    std::vector<work::Flow> ring;
    for (work::GpuId g = 0; g < 64; ++g) ring.push_back({g, (g + 9) % 64, 300'001});
    work::Dag between;
    between.add_coflow("ring", {}, 0, ring, {});
    between.resolve();
    EXPECT_EQ(expect_same(fabric, between, NetworkOptions{}), 0);
  }
}

TEST(DeliverOnSend, ARunCutOffAtItsEndTime) {
  // Cells whose heads would arrive at or after the end are not received, as
  // their events would not have been handled.
  const topo::Fabric fabric = leaf_spine(1);
  const work::Dag dag = contending(64);
  for (const Time end : {Time{5'123'457}, Time{40 * kMicrosecond}, Time{77'777'777}}) {
    SCOPED_TRACE(end);
    EXPECT_GT(expect_same(fabric, dag, NetworkOptions{}, {}, "fair", end), 0);
  }
}

}  // namespace
}  // namespace shoal::net
