// Small networks whose every completion time is known in closed form: each
// expected time below is derived in its comment from the link rates,
// latencies and cell sizes, then checked to the picosecond. Cut-through and
// store-and-forward, partial last cells, credits that stall the sender,
// strict priority between two classes, and round-robin against FIFO at a
// switch.
//
// Throughout: links of 100 Gb/s and 1 us (L), cells of 4,096 B, so a full
// cell takes T = 4,096 * 8 / 100e9 s = 327,680 ps on a link and 1,000 B take
// t = 80,000 ps. A flow's end is when its last byte's tail reaches its
// receiver. Same-instant events are taken in the order of the node that sent
// them (core::Event's key: time, source, sequence): GPUs come before the
// switches, a lower GPU before a higher one.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "one_rank_run.hpp"
#include "shoal/net/network.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::net {
namespace {

using exec::Perturbations;

constexpr Time L = kMicrosecond;  // every link's latency
constexpr Time T = 327'680;       // a full cell at 100 Gb/s
constexpr Time T2 = 2 * T;        // a full cell at 50 Gb/s
constexpr Bytes kCell = 4096;

/// `gpus` GPUs, one a server, on one switch: GPU -> switch -> GPU is two links.
topo::Fabric single_switch(work::GpuId gpus) {
  topo::FabricSpec spec;
  spec.gpus = gpus;
  spec.gpus_per_server = 1;
  return topo::build_single_switch(spec);
}

/// 4 GPUs, one a server, on a leaf-spine of radix 4: GPUs 0 and 1 on leaf 0,
/// 2 and 3 on leaf 1, so GPU 0 -> GPU 2 crosses four links (GPU, leaf,
/// spine, leaf, GPU).
topo::Fabric leaf_spine() {
  topo::FatTreeSpec spec;
  spec.base.gpus = 4;
  spec.base.gpus_per_server = 1;
  spec.radix = 4;
  return topo::build_fat_tree(spec);
}

struct TimedFlow {
  work::Flow flow;
  Time start = 0;
};

/// A coflow per flow, each starting at its time, no dependencies.
work::Dag flows_at(const std::vector<TimedFlow>& flows) {
  work::Dag dag;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const std::vector<work::Flow> one{flows[i].flow};
    dag.add_coflow("flow-" + std::to_string(i), {}, flows[i].start, one, {});
  }
  dag.resolve();
  return dag;
}

/// Every flow's end, run with the full checks and the ports' end state.
std::vector<Time> flow_ends(const topo::Fabric& fabric, const std::vector<TimedFlow>& flows,
                            NetworkOptions options = {}, const Perturbations& perturbations = {},
                            FlowPriorities priorities = {}) {
  const work::Dag dag = flows_at(flows);
  options.check = true;
  const test::OneRankRun run =
      test::run_one_rank(fabric, dag, options, perturbations, std::move(priorities), true);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    EXPECT_EQ(run.results.flow_start[i], flows[i].start) << "flow " << i;
  }
  return run.results.flow_end;
}

/// The link from GPU g's switch down to it.
topo::LinkId down_link(const topo::Fabric& fabric, work::GpuId g) {
  return fabric.link(fabric.nic_links(g).front()).reverse;
}

/// That link at 50 Gb/s from time 0 (for every cell).
Perturbations half_rate_into(const topo::Fabric& fabric, work::GpuId g) {
  Perturbations p;
  p.links.push_back({down_link(fabric, g), 0, 50'000'000'000, 0, false});
  return p;
}

TEST(ClosedForm, TheCellTimesAreWhatTheDerivationsUse) {
  EXPECT_EQ(transmit_time(kCell, 100'000'000'000), T);
  EXPECT_EQ(transmit_time(kCell, 50'000'000'000), T2);
  EXPECT_EQ(transmit_time(1'000, 100'000'000'000), 80'000);
}

// One flow over two links (GPU 0 -> switch -> GPU 1), cut-through. Cell k
// leaves the NIC at kT, its head reaches the switch at kT + L, and the switch
// forwards it at once (cut-through starts a cell as early as it cannot finish
// before its tail is in: on a link of the same rate, as its head arrives), so
// the cells pipeline and the last one's tail lands at (n - 1)T + 2L + its own
// serialization.
TEST(ClosedForm, OneFlowOnTwoLinksCutThrough) {
  const topo::Fabric fabric = single_switch(4);
  const std::vector<Time> ends = flow_ends(fabric, {
                                                       {{0, 1, 4 * kCell}, 0},
                                                       {{2, 3, 3 * kCell + 1'000}, 0},
                                                   });
  // Four full cells: 2L + 4T = 2,000,000 + 1,310,720.
  EXPECT_EQ(ends[0], 3'310'720);
  // Three full cells and 1,000 B: 2L + 3T + t = 2,000,000 + 983,040 + 80,000.
  EXPECT_EQ(ends[1], 3'063'040);
}

// The same store-and-forward: the switch starts each cell on once its tail is
// in, one serialization later (the cells still pipeline).
TEST(ClosedForm, OneFlowOnTwoLinksStoreAndForward) {
  const topo::Fabric fabric = single_switch(4);
  NetworkOptions saf;
  saf.cut_through = false;
  const std::vector<Time> ends = flow_ends(fabric,
                                           {
                                               {{0, 1, 4 * kCell}, 0},
                                               {{2, 3, 1'000}, 0},
                                           },
                                           saf);
  // 2L + 5T: cell k leaves the switch at kT + L + T.
  EXPECT_EQ(ends[0], 3'638'400);
  // One short cell: 2L + 2t.
  EXPECT_EQ(ends[1], 2'160'000);
}

// GPU 0 -> switch -> GPU 1, the switch's link down to GPU 1 at half rate
// (T2 = 2T a cell), four cells.
//
// Buffers ample: the down link is the bottleneck. Cell k reaches the switch at
// kT + L and leaves it at L + kT2 (cut-through starts it as its head arrives:
// the slower link cannot overtake its tail), so the end is
// L + 3T2 + L + T2 = 2L + 4T2 = 4,621,440.
//
// One cell of buffer per class: a port may send a cell only once the previous
// one has left the next node's buffer and that credit has come back over the
// link. Let d_k be when cell k starts down to GPU 1. GPU 1 takes the cell as
// its tail arrives (d_k + L + T2); the credit reaches the switch L later, so
// d_(k+1) >= d_k + 2L + T2. The switch frees cell k's buffer as its tail
// leaves (d_k + T2); that credit reaches GPU 0 at d_k + T2 + L, which sends
// cell k+1 then, its head at the switch at d_k + T2 + 2L: the same instant.
// So d_k = L + k(2L + T2) and the end is d_3 + L + T2 = 4(2L + T2) =
// 10,621,440: each cell waits a whole credit round trip.
//
// Two cells of buffer: two cells in flight per round trip. Cells 0 and 1 go
// at once (d_0 = L, d_1 = L + T2); cell 2 waits for cell 0's credits: GPU 0
// sends it at d_0 + T2 + L, it reaches the switch at 3L + T2, when GPU 1's
// credit for cell 0 is back too; cell 3 likewise at d_1 + 2L + T2 = 3L + 2T2
// (GPU 0 sends it at 2L + 2T2, after cell 2 at 2L + T2 has left). The end is
// d_3 + L + T2 = 4L + 3T2 = 5,966,080.
//
// With one cell of buffer both round trips above take 2L + T2, so neither
// alone decides the pace. A link 1 us longer (2L) makes one of them bind:
// - the link down to GPU 1: GPU 1's credit is back at the switch at
//   d_k + 2L + T2 + 2L, GPU 0's next cell there at d_k + T2 + 2L, waiting:
//   d_k = L + k(4L + T2), the end d_3 + 2L + T2 = 15L + 4T2 = 17,621,440;
// - the link up from GPU 0: the switch's credit reaches GPU 0 at
//   d_k + T2 + 2L and its next cell the switch at d_k + T2 + 4L, after GPU 1's
//   credit (d_k + 2L + T2): d_k = 2L + k(4L + T2), the end d_3 + L + T2 =
//   15L + 4T2 again.
TEST(ClosedForm, CreditsStallTheSenderBehindASlowerLink) {
  const topo::Fabric fabric = single_switch(2);
  const Perturbations slow = half_rate_into(fabric, 1);
  const std::vector<TimedFlow> flow{{{0, 1, 4 * kCell}, 0}};
  NetworkOptions ample;
  const Time unstalled = flow_ends(fabric, flow, ample, slow)[0];
  EXPECT_EQ(unstalled, 2 * L + 4 * T2);
  EXPECT_EQ(unstalled, 4'621'440);
  NetworkOptions one_cell;
  one_cell.buffer_per_class = kCell;
  const Time stalled = flow_ends(fabric, flow, one_cell, slow)[0];
  EXPECT_EQ(stalled, 4 * (2 * L + T2));
  EXPECT_EQ(stalled, 10'621'440);
  NetworkOptions two_cells;
  two_cells.buffer_per_class = 2 * kCell;
  const Time half_stalled = flow_ends(fabric, flow, two_cells, slow)[0];
  EXPECT_EQ(half_stalled, 4 * L + 3 * T2);
  EXPECT_EQ(half_stalled, 5'966'080);
  EXPECT_LT(unstalled, half_stalled);
  EXPECT_LT(half_stalled, stalled);
  {
    SCOPED_TRACE("the link down to GPU 1 1 us longer: GPU 1's credits set the pace");
    Perturbations longer = slow;
    longer.links.front().extra_latency = L;
    const Time end = flow_ends(fabric, flow, one_cell, longer)[0];
    EXPECT_EQ(end, 15 * L + 4 * T2);
    EXPECT_EQ(end, 17'621'440);
  }
  {
    SCOPED_TRACE("the link up from GPU 0 1 us longer: the switch's credits set the pace");
    Perturbations longer = slow;
    longer.links.push_back({fabric.nic_links(0).front(), 0, 0, L, false});
    const Time end = flow_ends(fabric, flow, one_cell, longer)[0];
    EXPECT_EQ(end, 15 * L + 4 * T2);
    EXPECT_EQ(end, 17'621'440);
  }
}

/// Flow i in class `cls[i]`, its NIC key the same.
FlowPriorities classes(const std::vector<std::uint8_t>& cls) {
  FlowPriorities p;
  p.cls = cls;
  p.key.assign(cls.begin(), cls.end());
  return p;
}

// Two flows of four cells into GPU 2 over the switch's one port down to it,
// A in class 0 from GPU 0 and B in class 1 from GPU 1. Class 0 goes first
// there, but a cell on the wire is not preempted.
//
// Both from 0: the cells of both reach the switch at L + kT. GPU 0's head is
// taken first at L, finds the port idle and goes; at every L + kT after, the
// heads (sent by GPUs) are taken before the port's own port-free event (sent
// by the switch), so A's next cell is always there when the port frees. A
// ends as if alone, 2L + 4T = 3,310,720; B's cells follow back to back from
// L + 4T: 2L + 8T = 4,621,440. (Same-instant heads are not arbitrated by
// class: with A from GPU 1 and B from GPU 0, B's first cell would take the
// idle port at L and A would end a cell late.)
//
// B from 0, A from T/2: B's first cell starts on the idle port at L; A's
// cells reach the switch at L + T/2 + kT and each waits for the port to free,
// at L + (k + 1)T, so A goes from L + T, half a cell later than alone:
// 2L + 5T = 3,638,400. B's other three follow: 2L + 8T again.
TEST(ClosedForm, StrictPriorityBetweenTwoClasses) {
  const topo::Fabric fabric = single_switch(3);
  {
    SCOPED_TRACE("class 0 first to the port");
    const std::vector<Time> ends = flow_ends(fabric,
                                             {
                                                 {{0, 2, 4 * kCell}, 0},
                                                 {{1, 2, 4 * kCell}, 0},
                                             },
                                             {}, {}, classes({0, 1}));
    EXPECT_EQ(ends[0], 2 * L + 4 * T);
    EXPECT_EQ(ends[0], 3'310'720);
    EXPECT_EQ(ends[1], 2 * L + 8 * T);
    EXPECT_EQ(ends[1], 4'621'440);
  }
  {
    SCOPED_TRACE("class 1 first on the wire");
    const std::vector<Time> ends = flow_ends(fabric,
                                             {
                                                 {{0, 2, 4 * kCell}, T / 2},
                                                 {{1, 2, 4 * kCell}, 0},
                                             },
                                             {}, {}, classes({0, 1}));
    EXPECT_EQ(ends[0], 2 * L + 5 * T);
    EXPECT_EQ(ends[0], 3'638'400);
    EXPECT_EQ(ends[1], 2 * L + 8 * T);
    EXPECT_EQ(ends[1], 4'621'440);
  }
  {
    SCOPED_TRACE("one class: the same flows share the port");
    const std::vector<Time> ends = flow_ends(fabric, {
                                                         {{0, 2, 4 * kCell}, 0},
                                                         {{1, 2, 4 * kCell}, 0},
                                                     });
    // Round robin, alternating from GPU 0's first cell: A0 B0 A1 B1 ... from
    // L, so A's last cell goes at L + 6T and B's at L + 7T.
    EXPECT_EQ(ends[0], 2 * L + 7 * T);
    EXPECT_EQ(ends[1], 2 * L + 8 * T);
  }
}

// GPU 0 sends A (four cells) from 0, GPU 1 sends B (two cells) from 2T, both
// to GPU 2, whose link from the switch is at half rate (T2 = 2T): A's cells
// reach the switch at L + kT, B's at L + 2T and L + 3T, and the port sends one
// every 2T from L (A0, which finds it idle), so they queue.
//
// FIFO: in arrival order. A1 goes at L + 2T; by L + 3T the queue holds A2,
// B0, A3, B1 (A's head first at each instant: GPU 0 sends it), so A3 goes at
// L + 8T, B1 at L + 10T: A ends 2L + 10T = 5,276,800, B 2L + 12T = 5,932,160.
//
// Round robin: B's lane joins the turn at L + 2T, behind A's; the port serves
// A1 there (A's lane then goes to the back, having A2), B0 at L + 4T, A2 at
// L + 6T, B1 at L + 8T, A3 at L + 10T: B ends 2L + 10T, A 2L + 12T. Either
// way the port is never idle, so the last cell ends at 2L + 12T.
TEST(ClosedForm, RoundRobinAgainstFifoAtASwitch) {
  const topo::Fabric fabric = single_switch(3);
  const Perturbations slow = half_rate_into(fabric, 2);
  const std::vector<TimedFlow> flows{{{0, 2, 4 * kCell}, 0}, {{1, 2, 2 * kCell}, 2 * T}};
  NetworkOptions fifo;
  fifo.switch_round_robin = false;
  const std::vector<Time> in_order = flow_ends(fabric, flows, fifo, slow);
  EXPECT_EQ(in_order[0], 2 * L + 10 * T);
  EXPECT_EQ(in_order[0], 5'276'800);
  EXPECT_EQ(in_order[1], 2 * L + 12 * T);
  EXPECT_EQ(in_order[1], 5'932'160);
  NetworkOptions round_robin;
  round_robin.switch_round_robin = true;
  const std::vector<Time> in_turn = flow_ends(fabric, flows, round_robin, slow);
  EXPECT_EQ(in_turn[0], 2 * L + 12 * T);
  EXPECT_EQ(in_turn[1], 2 * L + 10 * T);
}

// GPU 0 -> leaf 0 -> spine -> leaf 1 -> GPU 2: four links, three switches.
//
// Cut-through: each switch starts a cell as its head arrives, so the cells
// pipeline across all four links: n full cells end at 4L + nT; one short cell
// at 4L + t.
//
// Store-and-forward: each switch starts a cell once its tail is in, one
// serialization per switch: n full cells end at 4L + (n + 3)T; one short cell
// at 4L + 4t. A short last cell behind full ones gains nothing from being
// short: at every switch the full cell ahead of it is still on the wire when
// its tail arrives, so it leaves as that one ends, and the difference is 3T
// there too: (n - 1)T + 4L + 3T + t against (n - 1)T + 4L + t.
TEST(ClosedForm, StoreAndForwardAddsACellPerSwitch) {
  const topo::Fabric fabric = leaf_spine();
  NetworkOptions cut_through;
  NetworkOptions saf;
  saf.cut_through = false;
  struct Case {
    const char* name;
    Bytes bytes;
    Time cut_through_end;
    Time saf_end;
  };
  const Case cases[] = {
      // 4L + 4T = 4,000,000 + 1,310,720; 4L + 7T = 4,000,000 + 2,293,760.
      {"four full cells", 4 * kCell, 5'310'720, 6'293'760},
      // 4L + t; 4L + 4t.
      {"one short cell", 1'000, 4'080'000, 4'320'000},
      // 4L + 3T + t = 4,000,000 + 983,040 + 80,000; 4L + 6T + t.
      {"three full cells and a short one", 3 * kCell + 1'000, 5'063'040, 6'046'080},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<TimedFlow> flow{{{0, 2, c.bytes}, 0}};
    const Time ct = flow_ends(fabric, flow, cut_through)[0];
    const Time sf = flow_ends(fabric, flow, saf)[0];
    EXPECT_EQ(ct, c.cut_through_end);
    EXPECT_EQ(sf, c.saf_end);
    EXPECT_EQ(sf - ct, c.bytes >= kCell ? 3 * T : 3 * 80'000);
  }
}

}  // namespace
}  // namespace shoal::net
