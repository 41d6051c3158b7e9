// The weighted partition's pilot (exec/pilot.hpp) places a flow's cells in
// the slice where its sender group started, keeping one start per group: the
// loads must be those that every flow's own start gives.
#include "shoal/exec/pilot.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "work/training_cases.hpp"

namespace shoal::exec {
namespace {

using work::test_jobs::generate;
using work::test_jobs::small_moe;

constexpr std::size_t kSlices = 16;

net::NetworkOptions pilot_network_options() {
  net::NetworkOptions network;
  network.cell_size = 64 * 1024;
  return network;
}

/// The loads the pilot should find, from a run of the instant network that
/// keeps every flow's and task's start: what started before `end`, in
/// kSlices slices of `span`. `used` marks the slices anything started in.
std::vector<std::uint64_t> loads_from_starts(const topo::Fabric& fabric, const work::Dag& dag,
                                             const net::NetworkOptions& network, Time span,
                                             Time end, std::vector<std::uint8_t>& used) {
  net::NetworkOptions instant = network;
  instant.instant = true;
  instant.instant_latency = true;
  const exec::RunResults every_flow = test::run_one_rank(fabric, dag, instant).results;
  EXPECT_EQ(every_flow.flow_start.size(), dag.all_flows().size());
  std::vector<std::uint64_t> expected(std::size_t{fabric.gpu_count()} * kSlices, 0);
  used.assign(kSlices, 0);
  auto slice_of = [&](Time t) {
    return std::min<std::size_t>(
        kSlices - 1,
        static_cast<std::size_t>(static_cast<double>(t) / static_cast<double>(span) * kSlices));
  };
  for (std::size_t f = 0; f < dag.all_flows().size(); ++f) {
    const work::Flow& flow = dag.all_flows()[f];
    const Time start = every_flow.flow_start[f];
    EXPECT_NE(start, kTimeInfinity);
    if (start >= end) continue;
    const std::size_t s = slice_of(start);
    const std::uint64_t cells = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>((flow.bytes + network.cell_size - 1) / network.cell_size));
    expected[std::size_t{flow.src} * kSlices + s] += cells;
    expected[std::size_t{flow.dst} * kSlices + s] += cells;
    used[s] = 1;
  }
  for (std::size_t t = 0; t < dag.tasks().size(); ++t) {  // a task adds one where it starts
    if (every_flow.task_start[t] >= end) continue;
    expected[std::size_t{dag.tasks()[t].gpu} * kSlices + slice_of(every_flow.task_start[t])] += 1;
  }
  return expected;
}

TEST(Pilot, PlacesEachFlowWhereItsOwnStartWould) {
  work::JobSpec job = small_moe();
  const work::Dag dag = generate(job, 64);  // TP 2 x PP 2 x DP 16: pipeline stages stagger
  const topo::Fabric fabric = work::test_jobs::fat_tree_64();
  const net::NetworkOptions network = pilot_network_options();

  const PilotLoad pilot = pilot_load(core::Comm::self(), fabric, dag, network, {}, 1, kSlices);

  std::vector<std::uint8_t> used;
  EXPECT_EQ(pilot.load.slices, kSlices);
  EXPECT_EQ(pilot.load.load,
            loads_from_starts(fabric, dag, network, pilot.span, kTimeInfinity, used));
  // It engaged: groups of more than one flow, started over much of the run.
  const std::size_t groups = DependencyTracker(dag, [](work::GpuId) { return true; }).group_count();
  EXPECT_LT(groups, dag.all_flows().size());
  EXPECT_GE(std::count(used.begin(), used.end(), 1), 8);
}

// A run cut short is balanced for what it runs: the pilot stops at its end,
// and its slices span that time.
TEST(Pilot, StopsAtTheRunsEnd) {
  work::JobSpec job = small_moe();
  const work::Dag dag = generate(job, 64);
  const topo::Fabric fabric = work::test_jobs::fat_tree_64();
  const net::NetworkOptions network = pilot_network_options();
  const PilotLoad whole = pilot_load(core::Comm::self(), fabric, dag, network, {}, 1, kSlices);
  const Time end = whole.span / 3;

  const PilotLoad cut = pilot_load(core::Comm::self(), fabric, dag, network, {}, 1, kSlices, end);

  EXPECT_EQ(cut.span, end);
  EXPECT_LT(cut.events, whole.events);
  std::vector<std::uint8_t> used;
  const std::vector<std::uint64_t> expected =
      loads_from_starts(fabric, dag, network, end, end, used);
  EXPECT_EQ(cut.load.load, expected);
  // Some, not all, of the whole pilot's load, spread over the cut's slices.
  auto sum = [](const std::vector<std::uint64_t>& v) {
    return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
  };
  EXPECT_GT(sum(cut.load.load), 0u);
  EXPECT_LT(sum(cut.load.load), sum(whole.load.load));
  EXPECT_GE(std::count(used.begin(), used.end(), 1), 4);
}

// The guard's estimate counts a rank's share: for each flow it sends, its
// sender group's start and the executor's slots (8 + 8 bytes), and a share of
// the received-bytes table.
TEST(Pilot, EstimatesARanksShare) {
  work::JobSpec job = small_moe();
  const work::Dag dag = generate(job, 64);
  const topo::Fabric fabric = work::test_jobs::fat_tree_64();
  const std::uint64_t flows = dag.all_flows().size();
  const net::RankShare all = net::RankShare::whole(fabric, dag);
  const std::uint64_t whole = pilot_estimate_bytes(fabric, dag, {}, all);
  const std::uint64_t eighth =
      pilot_estimate_bytes(fabric, dag, {}, {flows / 8, all.links, all.gpus});
  EXPECT_LT(eighth, whole);
  EXPECT_GE(whole - eighth, (flows - flows / 8) * 16);
  EXPECT_LE(whole - eighth, (flows - flows / 8) * 24);
}

}  // namespace
}  // namespace shoal::exec
