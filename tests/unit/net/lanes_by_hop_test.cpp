// A flow's lane at a port found by (flow, hop) (NetworkOptions::lanes_by_hop)
// rather than by a hash of (link, class, flow) must not change a run: every
// flow and task starts and ends at the same picosecond, with the same events.
// Across fabrics whose routes differ in length (leaf-spine, three tiers,
// NVSwitch inside servers, PXN relays on a multi-plane fabric, a NIC with two
// ports), policies with two classes, credits that gate, and a run cut off at
// its end time; and by-hop lanes are declined where a flow's cells can wait
// at two ports on the same hop, and where the table would be too large.
#include <gtest/gtest.h>

#include <string>

#include "contending_dag.hpp"
#include "one_rank_run.hpp"
#include "shoal/net/network.hpp"
#include "shoal/topo/builders.hpp"

namespace shoal::net {
namespace {

using exec::Perturbations;

work::Dag contending(work::GpuId gpus) {
  return test::contending_dag(gpus, 30'000, 500'001, 3 * kMicrosecond);
}

/// The run with lanes by hash, then by hop: the same, event for event.
void expect_same(const topo::Fabric& fabric, const work::Dag& dag,
                 const NetworkOptions& options = {}, const std::string& policy = "fair",
                 Time end_time = kTimeInfinity) {
  EXPECT_GT(Ports::lane_hops(fabric, options, {}, dag.all_flows().size()),
            0u);  // else both runs hash
  EXPECT_EQ(test::events_saved_by(&NetworkOptions::lanes_by_hop, fabric, dag, options, {}, policy,
                                  end_time),
            0);
}

TEST(LanesByHop, RunsAreTheSameOnALeafSpine) {
  const topo::Fabric fabric = test::contending_leaf_spine(1);
  EXPECT_EQ(Ports::lane_hops(fabric, {}, {}, 1), 4u);  // GPU, leaf, spine, leaf, GPU
  const work::Dag dag = contending(64);
  for (const Bytes buffer : {Bytes{8 * 1024}, Bytes{64 * 1024}, Bytes{512 * 1024}}) {
    for (const char* policy : {"fair", "hermod"}) {
      SCOPED_TRACE(std::string(policy) + ", " + std::to_string(buffer) + " B of buffer");
      NetworkOptions options;
      options.buffer_per_class = buffer;
      expect_same(fabric, dag, options, policy);
    }
  }
}

TEST(LanesByHop, ThreeTiersNvSwitchMultiPlaneAndDualPlaneFabrics) {
  const work::Dag dag = contending(64);
  {
    SCOPED_TRACE("three tiers: six links a route");
    const topo::Fabric fabric = test::contending_three_tier();
    EXPECT_EQ(Ports::lane_hops(fabric, {}, {}, 1), 6u);
    expect_same(fabric, dag, {}, "hermod");
  }
  {
    SCOPED_TRACE("fat tree, 8 GPUs a server: NVSwitch queues too");
    expect_same(test::contending_leaf_spine(8), dag);
  }
  {
    SCOPED_TRACE("multi-plane: relayed cells wait at the relaying GPU, two links on");
    const topo::Fabric fabric = test::contending_multi_plane();
    EXPECT_EQ(Ports::lane_hops(fabric, {}, {}, 1), 6u);
    expect_same(fabric, dag, {}, "hermod");
  }
  {
    SCOPED_TRACE("dual-plane rail: a NIC's two ports");
    expect_same(test::contending_dual_plane_rail(), dag);
  }
}

TEST(LanesByHop, ARunCutOffAtItsEndTime) {
  const topo::Fabric fabric = test::contending_leaf_spine(1);
  const work::Dag dag = contending(64);
  for (const Time end : {Time{5'123'457}, Time{40 * kMicrosecond}}) {
    SCOPED_TRACE(end);
    expect_same(fabric, dag, {}, "fair", end);
  }
}

TEST(LanesByHop, DeclinedWhereAFlowsCellsCanWaitAtTwoPortsOnOneHop) {
  const topo::Fabric fabric = test::contending_leaf_spine(1);
  NetworkOptions spray;
  spray.load_balancing = LoadBalancing::kSpray;
  EXPECT_EQ(Ports::lane_hops(fabric, spray, {}, 1), 0u);
  NetworkOptions adaptive;
  adaptive.load_balancing = LoadBalancing::kAdaptive;
  EXPECT_EQ(Ports::lane_hops(fabric, adaptive, {}, 1), 0u);
  NetworkOptions guard;  // a promoted flow's cells change class
  guard.starvation_after = 10 * kMicrosecond;
  EXPECT_EQ(Ports::lane_hops(fabric, guard, {}, 1), 0u);
  NetworkOptions fifo;  // one lane per port class: no table at all
  fifo.switch_round_robin = false;
  EXPECT_EQ(Ports::lane_hops(fabric, fifo, {}, 1), 0u);
  Perturbations failure;  // routes go around it from then on
  failure.links.push_back({fabric.out_links(fabric.gpu_node(0)).front(), kMicrosecond, 0, 0, true});
  EXPECT_EQ(Ports::lane_hops(fabric, {}, failure.links, 1), 0u);
  Perturbations slower;  // a slower link changes no route
  slower.links.push_back(
      {fabric.out_links(fabric.gpu_node(0)).front(), kMicrosecond, 25'000'000'000, 0, false});
  EXPECT_EQ(Ports::lane_hops(fabric, {}, slower.links, 1), 4u);
}

// The table holds 4 bytes for every flow and hop but the first (12 a flow on a
// leaf-spine), on every rank: past NetworkOptions::lanes_by_hop_max_bytes the
// hash takes over.
TEST(LanesByHop, DeclinedWhereTheTableWouldBeTooLarge) {
  const topo::Fabric fabric = test::contending_leaf_spine(1);
  const NetworkOptions options;
  const std::size_t most = options.lanes_by_hop_max_bytes / 12;
  EXPECT_EQ(PortQueues::by_hop_bytes(most, 4), most * 12);
  EXPECT_EQ(Ports::lane_hops(fabric, options, {}, most), 4u);
  EXPECT_EQ(Ports::lane_hops(fabric, options, {}, most + 1), 0u);
  NetworkOptions small = options;
  small.lanes_by_hop_max_bytes = 12 * 64;
  EXPECT_EQ(Ports::lane_hops(fabric, small, {}, 64), 4u);
  EXPECT_EQ(Ports::lane_hops(fabric, small, {}, 65), 0u);
}

}  // namespace
}  // namespace shoal::net
