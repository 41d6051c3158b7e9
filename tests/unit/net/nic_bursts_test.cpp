// A NIC port sending its own flows' cells in bursts (NetworkOptions::nic_bursts)
// must not change a run: every flow and task starts and ends at the same
// picosecond as with a port-free event per cell, with flows that join a key's
// turn while a burst is on the wire (some at the very instant a cell of it
// starts), under fair sharing and Hermod's keys, with compute between the
// coflows, slowed and failed NIC ports, GPUs that relay (PXN) and a run cut
// off at an end time.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contending_dag.hpp"
#include "one_rank_run.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/net/network.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::net {
namespace {

using exec::Perturbations;

/// Runs with a port-free event per cell, then with bursts: the same run, with
/// fewer events. Returns the events saved.
std::int64_t expect_same(const topo::Fabric& fabric, const work::Dag& dag,
                         const NetworkOptions& options = {},
                         const Perturbations& perturbations = {},
                         const std::string& policy = "fair", Time end_time = kTimeInfinity) {
  return test::events_saved_by(&NetworkOptions::nic_bursts, fabric, dag, options, perturbations,
                               policy, end_time);
}

topo::Fabric leaf_spine(std::uint32_t gpus_per_server) {
  return test::contending_leaf_spine(gpus_per_server);
}

TEST(NicBursts, RunsAreTheSameOnALeafSpine) {
  const topo::Fabric fabric = leaf_spine(1);
  // Compute between the coflows: flows start while their NIC is sending.
  const work::Dag dag = test::contending_dag(64, 40'000, 700'001, 3 * kMicrosecond);
  struct Case {
    const char* name;
    Bytes buffer;
    LoadBalancing balancing;
    const char* policy;
  };
  const Case cases[] = {
      {"two cells of buffer", 8 * 1024, LoadBalancing::kEcmp, "fair"},
      {"64 KiB", 64 * 1024, LoadBalancing::kEcmp, "fair"},
      {"64 KiB, hermod", 64 * 1024, LoadBalancing::kEcmp, "hermod"},
      {"512 KiB, lina", 512 * 1024, LoadBalancing::kEcmp, "lina"},
      {"48 KiB, spray", 48 * 1024, LoadBalancing::kSpray, "fair"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    NetworkOptions options;
    options.buffer_per_class = c.buffer;
    options.load_balancing = c.balancing;
    EXPECT_GT(expect_same(fabric, dag, options, {}, c.policy), 0);
  }
}

TEST(NicBursts, NvLinkPortsAndServers) {
  const topo::Fabric fabric = leaf_spine(8);
  const work::Dag dag = test::contending_dag(64, 90'000, 300'001, 2 * kMicrosecond);
  // Flows inside servers only, over NVLink: the GPUs' ports into their
  // NVSwitch burst too.
  std::vector<work::Flow> inside;
  for (work::GpuId g = 0; g < 64; ++g) inside.push_back({g, g / 8 * 8 + (g + 3) % 8, 300'001});
  work::Dag nvlink;
  nvlink.add_coflow("inside", {}, 0, inside, {});
  nvlink.resolve();
  for (const char* policy : {"fair", "hermod"}) {
    SCOPED_TRACE(policy);
    EXPECT_GT(expect_same(fabric, dag, {}, {}, policy), 0);
    EXPECT_GT(expect_same(fabric, nvlink, {}, {}, policy), 0);
  }
}

/// GPU 0 sends to 15 others; more flows from it start on a timer, at instants
/// a whole number of its cells apart (so some start exactly as one of its
/// cells does) and in between.
work::Dag joining(Time cell_time) {
  work::Dag dag;
  work::CoflowLabels labels;
  labels.type = work::CoflowType::kEp;
  std::vector<work::Flow> first;
  for (work::GpuId d = 1; d < 16; ++d) first.push_back({0, d, 40'000 + 1'000 * d});
  dag.add_coflow("first", labels, 0, first, {});
  for (int k = 1; k <= 40; ++k) {
    // Every third a third of a cell late, the rest on a cell's start.
    const Time at = k * 3 * cell_time + (k % 3 == 0 ? cell_time / 3 : 0);
    std::vector<work::Flow> flows;
    for (work::GpuId d = 16 + static_cast<work::GpuId>(k % 3); d < 64; d += 11)
      flows.push_back({0, d, 9'000 + 500 * static_cast<Bytes>(k)});
    labels.layer = static_cast<std::uint32_t>(k);
    dag.add_coflow("join-" + std::to_string(k), labels, at, flows, {});
  }
  dag.resolve();
  return dag;
}

TEST(NicBursts, FlowsThatJoinWhileABurstIsOnTheWire) {
  const topo::Fabric fabric = leaf_spine(1);
  const Time cell_time = transmit_time(4096, fabric.link(fabric.nic_links(0).front()).rate);
  const work::Dag dag = joining(cell_time);
  for (const Bytes buffer : {Bytes{16 * 1024}, Bytes{512 * 1024}}) {
    for (const char* policy : {"fair", "hermod"}) {
      SCOPED_TRACE(std::string(policy) + ", " + std::to_string(buffer) + " B of buffer");
      NetworkOptions options;
      options.buffer_per_class = buffer;
      const std::int64_t saved = expect_same(fabric, dag, options, {}, policy);
      EXPECT_GT(saved, 0);
      if (policy == std::string("fair")) {
        EXPECT_GT(saved, 50);
      }
    }
  }
}

// Links a whole number of cells long and full cells only, so that a flow's
// acknowledgement reaches GPU 0 exactly as one of its cells starts, from a GPU
// whose key comes after GPU 0's: the flow that acknowledgement starts joins
// behind that cell.
TEST(NicBursts, AFlowThatJoinsAsACellStarts) {
  topo::FabricSpec spec;
  spec.gpus = 48;
  spec.gpus_per_server = 1;
  const Time cell_time = transmit_time(4096, spec.link_rate);
  spec.link_latency = 10 * cell_time;
  const topo::Fabric fabric = topo::build_single_switch(spec);
  work::Dag dag;
  work::CoflowLabels labels;
  labels.type = work::CoflowType::kEp;
  std::vector<work::Flow> first;
  for (work::GpuId d = 1; d < 16; ++d) first.push_back({0, d, 40 * 4096});
  dag.add_coflow("first", labels, 0, first, {});
  for (int k = 1; k <= 10; ++k) {
    const auto probe = "probe-" + std::to_string(k);
    const std::vector<work::Flow> one{{0, static_cast<work::GpuId>(16 + k), 4096}};
    dag.add_coflow(probe, labels, k * 5 * cell_time, one, {});
    std::vector<work::Flow> then;
    for (work::GpuId d = 30; d < 40; d += 2) then.push_back({0, d, 3 * 4096});
    dag.add_coflow("after-" + std::to_string(k), labels, 0, then, {probe});
  }
  dag.resolve();
  EXPECT_GT(expect_same(fabric, dag), 0);
}

TEST(NicBursts, SlowedNicsAndAnEndTime) {
  const topo::Fabric fabric = leaf_spine(1);
  const work::Dag dag = test::contending_dag(64, 40'000, 700'001, 3 * kMicrosecond);
  Perturbations slowed;
  // NICs slowed to a quarter and 2 us longer from instants inside bursts.
  for (work::GpuId g = 0; g < 64; g += 5) {
    slowed.links.push_back({fabric.nic_links(g).front(), 7 * kMicrosecond + 12'345 * g,
                            25'000'000'000, 2 * kMicrosecond});
  }
  EXPECT_GT(expect_same(fabric, dag, {}, slowed, "fair"), 0);
  EXPECT_GT(expect_same(fabric, dag, {}, {}, "fair", 37 * kMicrosecond + 777), 0);
}

TEST(NicBursts, AFailedNicPortHandsItsFlowsToTheOther) {
  topo::RailSpec spec;
  spec.base.gpus = 32;
  spec.base.gpus_per_server = 8;
  spec.radix = 16;
  spec.dual_plane = true;
  const topo::Fabric fabric = topo::build_rail_optimized(spec);
  const work::Dag dag = test::contending_dag(32, 60'000, 400'001);
  Perturbations failed;
  for (work::GpuId g = 0; g < 32; g += 3) {
    failed.links.push_back({fabric.nic_links(g).front(), 5 * kMicrosecond + 1'000 * g, 0, 0, true});
  }
  for (const char* policy : {"fair", "hermod"}) {
    SCOPED_TRACE(policy);
    EXPECT_GT(expect_same(fabric, dag, {}, failed, policy), 0);
  }
}

/// On 4 planes, 8 GPUs a server (GPU i's NIC on plane i mod 4), GPUs 0 to 3 of
/// every server each send a flow to GPU i + 4 two servers on, on its own plane
/// (no relay); with `relayed`, also one to GPU (i + 1) mod 4 of the next
/// server, on another plane: the first GPU of the sender's server on that
/// plane, (i + 1) mod 4, relays it (Fabric::relay_for), so every sender relays.
work::Dag plane_flows(bool relayed) {
  std::vector<work::Flow> flows;
  for (work::GpuId server = 0; server < 8; ++server) {
    for (work::GpuId i = 0; i < 4; ++i) {
      const work::GpuId g = 8 * server + i;
      flows.push_back({g, 8 * ((server + 2) % 8) + i + 4, 200'001});
      if (relayed) flows.push_back({g, 8 * ((server + 1) % 8) + (i + 1) % 4, 60'001});
    }
  }
  work::Dag dag;
  work::CoflowLabels labels;
  labels.type = work::CoflowType::kEp;
  dag.add_coflow("planes", labels, 0, flows, {});
  dag.resolve();
  return dag;
}

// A GPU that relays (PXN) is one whose ports never burst (number_gpu_ports):
// where every GPU that sends also relays, bursts save not one event, while
// the same GPUs' own flows alone, relaying nothing, do burst.
TEST(NicBursts, GpusThatRelayKeepAnEventPerCell) {
  topo::MultiPlaneSpec spec;
  spec.base.gpus = 64;
  spec.base.gpus_per_server = 8;
  spec.planes = 4;
  spec.radix = 16;
  const topo::Fabric fabric = topo::build_multi_plane(spec);
  for (const char* policy : {"fair", "hermod"}) {
    SCOPED_TRACE(policy);
    EXPECT_EQ(expect_same(fabric, plane_flows(true), {}, {}, policy), 0);
    EXPECT_GT(expect_same(fabric, plane_flows(false), {}, {}, policy), 0);
    // The contending DAG's relays are GPUs 0 to 3 of each server (the first
    // on each plane); GPUs 4 to 7 relay nothing, and their ports burst.
    const work::Dag dag = test::contending_dag(64, 50'000, 300'001, 2 * kMicrosecond);
    EXPECT_GT(expect_same(fabric, dag, {}, {}, policy), 0);
  }
}

}  // namespace
}  // namespace shoal::net
