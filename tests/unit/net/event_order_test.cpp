// The engine taking a window's events atom by atom (core::EventOrder::kAtom)
// rather than by time must not change a network run: every flow and task
// starts and ends at the same picosecond, with the same bytes and cell-hops.
// Only the events may differ, where a credit added early from another atom
// (Network::credit_early, bounded by Simulator::floor) is decided otherwise.
// Across fabrics (leaf-spine, three tiers, NVSwitch servers, PXN relays on a
// multi-plane fabric, a NIC with two ports), policies with two classes,
// credits that gate, spraying, adaptive routing, FIFO switches, the
// starvation guard, a failing and a slower link, a straggler, compute tasks,
// and a run cut off at its end time; and the choice "auto" makes.
#include <gtest/gtest.h>

#include <string>

#include "contending_dag.hpp"
#include "one_rank_run.hpp"
#include "shoal/net/network.hpp"
#include "shoal/topo/builders.hpp"

namespace shoal::net {
namespace {

using exec::Perturbations;

work::Dag contending(work::GpuId gpus, Time compute = 0) {
  return test::contending_dag(gpus, 30'000, 500'001, 3 * kMicrosecond + compute);
}

/// The run by time, then by atom: the same results.
void expect_same(const topo::Fabric& fabric, const work::Dag& dag, NetworkOptions options = {},
                 const Perturbations& perturbations = {}, const std::string& policy = "fair",
                 Time end_time = kTimeInfinity) {
  const test::OneRankRun by_time = test::run_policy(fabric, dag, options, perturbations, policy,
                                                    end_time, core::EventOrder::kTime);
  const test::OneRankRun by_atom = test::run_policy(fabric, dag, options, perturbations, policy,
                                                    end_time, core::EventOrder::kAtom);
  EXPECT_EQ(by_time.sub_window, 0);
  EXPECT_GT(by_atom.sub_window, 0);  // it did run by atom
  EXPECT_GT(by_time.events, 5'000);
  test::expect_same_results(by_time, by_atom);
}

TEST(EventOrder, RunsAreTheSameOnALeafSpine) {
  const topo::Fabric fabric = test::contending_leaf_spine(1);
  const work::Dag dag = contending(64);
  for (const Bytes buffer :
       {Bytes{4 * 1024}, Bytes{8 * 1024}, Bytes{64 * 1024}, Bytes{512 * 1024}}) {
    for (const char* policy : {"fair", "hermod"}) {
      SCOPED_TRACE(std::string(policy) + ", " + std::to_string(buffer) + " B of buffer");
      NetworkOptions options;
      options.buffer_per_class = buffer;
      expect_same(fabric, dag, options, {}, policy);
    }
  }
}

TEST(EventOrder, ThreeTiersNvSwitchMultiPlaneAndDualPlaneFabrics) {
  const work::Dag dag = contending(64);
  {
    SCOPED_TRACE("three tiers");
    expect_same(test::contending_three_tier(), dag, {}, {}, "hermod");
  }
  {
    SCOPED_TRACE("8 GPUs a server: NVLink inside an atom, shorter than the sub-window");
    expect_same(test::contending_leaf_spine(8), dag);
  }
  {
    SCOPED_TRACE("multi-plane: cells relayed inside a server");
    expect_same(test::contending_multi_plane(), dag, {}, {}, "hermod");
  }
  {
    SCOPED_TRACE("dual-plane rail: a NIC's two ports");
    expect_same(test::contending_dual_plane_rail(), dag);
  }
}

TEST(EventOrder, SprayingAdaptiveFifoAndTheStarvationGuard) {
  const topo::Fabric fabric = test::contending_leaf_spine(1);
  const work::Dag dag = contending(64);
  NetworkOptions spray;
  spray.load_balancing = LoadBalancing::kSpray;
  expect_same(fabric, dag, spray);
  NetworkOptions adaptive;
  adaptive.load_balancing = LoadBalancing::kAdaptive;
  expect_same(fabric, dag, adaptive);
  NetworkOptions fifo;
  fifo.switch_round_robin = false;
  expect_same(fabric, dag, fifo, {}, "hermod");
  NetworkOptions guard;
  guard.starvation_after = 10 * kMicrosecond;
  expect_same(fabric, dag, guard, {}, "lina");
}

TEST(EventOrder, PerturbationsComputeAndAnEndTime) {
  const topo::Fabric fabric = test::contending_leaf_spine(8);
  const work::Dag dag = contending(64, 5 * kMicrosecond);
  // GPU 3's leaf's last link, up to a spine (routes go around it once it fails).
  const topo::LinkId uplink = fabric.out_links(fabric.link(fabric.nic_links(3).front()).to).back();
  ASSERT_TRUE(fabric.link(uplink).up);
  {
    SCOPED_TRACE("a link that fails, one that slows and lengthens, a straggler");
    Perturbations p;
    p.links.push_back({uplink, 4 * kMicrosecond, 0, 0, true});
    p.links.push_back(
        {fabric.nic_links(40).front(), 2 * kMicrosecond, 25'000'000'000, 700 * kNanosecond, false});
    p.gpus.push_back({5, 0, 3.0});
    expect_same(fabric, dag, {}, p, "hermod");
  }
  for (const Time end : {Time{5'123'457}, Time{40 * kMicrosecond}}) {
    SCOPED_TRACE(end);
    expect_same(fabric, dag, {}, {}, "fair", end);
  }
}

TEST(EventOrder, AutoTakesAtomOrderOnLargeFabricsWithSeveralCellsASubWindow) {
  NetworkOptions options;  // 4 KiB cells
  // 16 GPUs: too few links between atoms.
  EXPECT_EQ(Network::event_order_for(test::contending_leaf_spine(1), options),
            core::EventOrder::kTime);
  topo::FatTreeSpec spec;  // 8,192 hosts on a 3-tier k = 32 tree: 49,152 links between atoms
  spec.base.gpus = 8192;
  spec.base.gpus_per_server = 1;
  spec.base.link_rate = 100'000'000'000;  // 3 cells of 4 KiB in the 1 us sub-window
  spec.base.link_latency = kMicrosecond;
  spec.tiers = 3;
  spec.radix = 32;
  const topo::Fabric large = topo::build_fat_tree(spec);
  EXPECT_EQ(Network::event_order_for(large, options), core::EventOrder::kAtom);
  options.cell_size = 64 * 1024;  // a sixth of a cell: a switch has little to do in one
  EXPECT_EQ(Network::event_order_for(large, options), core::EventOrder::kTime);
}

}  // namespace
}  // namespace shoal::net
