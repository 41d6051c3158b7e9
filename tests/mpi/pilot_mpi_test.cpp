// The weighted partition's pilot (exec/pilot.hpp) at N ranks, each rank its
// own GPUs, against the pilot on one rank: the same loads and events, so the
// weighted partition is the same however many ranks make it. And the instant
// network with latency it runs on: every flow takes exactly its path's
// latency, and its bytes are counted once, where it arrives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "shoal/core/comm.hpp"
#include "shoal/exec/fragment.hpp"
#include "shoal/exec/pilot.hpp"
#include "shoal/net/network.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/load_partition.hpp"
#include "work/training_cases.hpp"

namespace shoal::exec {
namespace {

using work::test_jobs::generate;
using work::test_jobs::small_moe;

struct Job {
  work::Dag dag;
  topo::Fabric fabric;
};

Job small_moe_job() {
  work::JobSpec job = small_moe();
  work::Dag dag = generate(job, 64);
  topo::FatTreeSpec spec;
  spec.base.gpus = 64;
  spec.base.gpus_per_server = 4;
  spec.radix = 16;  // 8 GPUs a leaf: 8 leaves, so every rank count cuts the job
  return {std::move(dag), topo::build_fat_tree(spec)};
}

/// Flows whose sender and receiver the pilot's partition puts on different ranks.
std::size_t crossing_flows(const Job& job, int ranks) {
  const std::vector<std::int32_t> owner =
      pilot_partition(job.fabric, ranks).entity_ranks(job.fabric.layout());
  return static_cast<std::size_t>(std::count_if(
      job.dag.all_flows().begin(), job.dag.all_flows().end(), [&](const work::Flow& f) {
        return owner[job.fabric.gpu_node(f.src)] != owner[job.fabric.gpu_node(f.dst)];
      }));
}

TEST(PilotMpi, LoadsAreTheSameOnAnyNumberOfRanks) {
  const core::Comm world = core::Comm::world();
  const Job job = small_moe_job();
  net::NetworkOptions network;
  network.cell_size = 64 * 1024;
  const PilotLoad alone = pilot_load(core::Comm::self(), job.fabric, job.dag, network, {}, 7, 64);
  const PilotLoad shared = pilot_load(world, job.fabric, job.dag, network, {}, 7, 64);
  if (world.size() > 1) {
    EXPECT_GT(crossing_flows(job, world.size()), 0u) << "no flow crossed ranks: nothing tested";
  }
  EXPECT_EQ(shared.events, alone.events);
  EXPECT_EQ(shared.span, alone.span);
  EXPECT_EQ(shared.load.load, alone.load.load);
  EXPECT_GT(*std::max_element(alone.load.load.begin(), alone.load.load.end()), 0u);
}

TEST(PilotMpi, FlowsTakeTheirPathsLatencyOnTheInstantNetworkWithLatency) {
  const core::Comm world = core::Comm::world();
  const Job job = small_moe_job();
  net::NetworkOptions network;
  network.instant = true;
  network.instant_latency = true;
  const test::OneRankRun run = test::run_on(world, "topology", job.fabric, job.dag, network);
  if (world.rank() != 0) return;
  const std::span<const work::Flow> flows = job.dag.all_flows();
  ASSERT_EQ(run.results.flow_end.size(), flows.size());
  for (std::size_t f = 0; f < flows.size(); ++f) {
    ASSERT_EQ(run.results.flow_end[f] - run.results.flow_start[f],
              job.fabric.path_latency(flows[f].src, flows[f].dst))
        << "flow " << f;
  }
  EXPECT_EQ(run.results.bytes_delivered, job.dag.total_bytes());
}

TEST(PilotMpi, AWeightedPartitionHoldsOnlyTheFlowsARanksGpusSendOrReceive) {
  // A flow's bytes are counted at its receiver's leaf (delivery on send):
  // the weighted partition keeps each leaf with its servers, so no rank holds
  // a flow only because one of its switches counts it.
  const core::Comm world = core::Comm::world();
  const Job job = small_moe_job();
  net::NetworkOptions network;
  network.cell_size = 64 * 1024;
  ASSERT_TRUE(network.deliver_on_send);
  const PilotLoad pilot = pilot_load(world, job.fabric, job.dag, network, {}, 7, 64);
  const core::Partition weighted = topo::partition_by_load(job.fabric, world.size(), pilot.load);
  const work::DagFragment fragment = rank_fragment(job.fabric, network, weighted, world.rank());
  const std::vector<topo::NodeId> inbound = net::Network::inbound_nodes(job.fabric, network);
  std::size_t at_switches = 0;
  std::size_t held = 0;
  for (const work::Flow& f : job.dag.all_flows()) {
    at_switches +=
        net::Network::counted_at(job.fabric, inbound, f.src, f.dst) != job.fabric.gpu_node(f.dst);
    const bool own = fragment.owns[f.src] || fragment.owns[f.dst];
    held += own;
    ASSERT_EQ(fragment.keep(f), own) << f.src << " -> " << f.dst;
  }
  EXPECT_GT(at_switches, 0u) << "no flow counted at a switch: nothing tested";
  if (world.size() > 1) {
    EXPECT_LT(held, job.dag.all_flows().size());
  }
}

}  // namespace
}  // namespace shoal::exec
