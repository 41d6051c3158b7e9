// Up/down routing in fat trees: every pair reachable in the expected hops, path
// latency, next links, and ECMP's deterministic spread over the uplinks.
#include "shoal/topo/fabric.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "fabric_test_support.hpp"
#include "shoal/topo/builders.hpp"

namespace shoal::topo {
namespace {

using namespace fabric_test;

std::uint32_t leaf_of(const Shape& s, GpuId g) { return g / (s.radix / 2); }

int expected_hops(const Shape& s, GpuId src, GpuId dst) {
  const std::uint32_t a = leaf_of(s, src), b = leaf_of(s, dst);
  if (a == b) return 2;
  if (s.tiers == 2 || a / (s.radix / 2) == b / (s.radix / 2)) return 4;
  return 6;
}

TEST(Routing, EveryPairReachableWithUpDownHopCounts) {
  for (const Shape& s : kShapes) {
    if (s.gpus > 128) continue;  // exhaustive below
    SCOPED_TRACE(shape_name(s));
    const Fabric f = build(s);
    for (GpuId src = 0; src < s.gpus; ++src) {
      for (GpuId dst = 0; dst < s.gpus; ++dst) {
        if (src / s.per_server == dst / s.per_server) continue;
        for (const std::uint64_t hash : {0ull, 1ull, 0x9e3779b97f4a7c15ull}) {
          int hops = 0;
          Time latency = 0;
          ASSERT_TRUE(walk(f, src, dst, hash, hops, latency)) << src << " -> " << dst;
          ASSERT_EQ(hops, expected_hops(s, src, dst)) << src << " -> " << dst;
          ASSERT_EQ(latency, hops * kLatency);
        }
      }
    }
  }
}

TEST(Routing, LargeThreeTierSampled) {
  const Shape s{3, 16, 1024, 8, 1, 1, 128, 128, 64, 1024, 1024};
  const Fabric f = build(s);
  std::map<int, int> by_hops;
  for (GpuId src = 0; src < 1024; src += 37) {
    for (GpuId dst = 0; dst < 1024; ++dst) {
      if (src / 8 == dst / 8) continue;
      int hops = 0;
      Time latency = 0;
      ASSERT_TRUE(walk(f, src, dst, src * 1315423911ull + dst, hops, latency))
          << src << "->" << dst;
      ASSERT_EQ(hops, expected_hops(s, src, dst)) << src << " -> " << dst;
      ++by_hops[hops];
    }
  }
  // A server is a leaf here (8 hosts per leaf), so no 2-hop pairs between servers.
  EXPECT_EQ(by_hops.count(2), 0u);
  EXPECT_GT(by_hops[4], 0);
  EXPECT_GT(by_hops[6], 0);
}

TEST(Routing, PathLatencyIsHopsTimesLinkLatency) {
  for (const Shape& s : kShapes) {
    if (s.gpus > 128) continue;
    SCOPED_TRACE(shape_name(s));
    const Fabric f = build(s);
    for (GpuId src = 0; src < s.gpus; ++src) {
      for (GpuId dst = 0; dst < s.gpus; ++dst) {
        const Time expected = src / s.per_server == dst / s.per_server
                                  ? 2 * kNvLatency
                                  : expected_hops(s, src, dst) * kLatency;
        ASSERT_EQ(f.path_latency(src, dst), expected) << src << " -> " << dst;
      }
    }
  }
}

TEST(Routing, PathLatencyWithOtherLatencies) {
  FatTreeSpec spec = fat_spec(3, 4, 16, 2);
  spec.base.link_latency = 700 * kNanosecond;
  spec.base.nvlink_latency = 3 * kNanosecond;
  const Fabric f = build_fat_tree(spec);
  EXPECT_EQ(f.path_latency(0, 1), 6 * kNanosecond);         // one server
  EXPECT_EQ(f.path_latency(0, 2), 4 * 700 * kNanosecond);   // same pod, other leaf
  EXPECT_EQ(f.path_latency(0, 15), 6 * 700 * kNanosecond);  // other pod
  EXPECT_EQ(f.path_latency(15, 0), 6 * 700 * kNanosecond);
}

/// Leaf nodes below switch v (v itself when it is a leaf), found by following down links.
std::set<NodeId> leaves_below(const Fabric& f, NodeId v) {
  std::set<NodeId> out;
  if (f.node(v).kind != NodeKind::kSwitch) return out;
  if (f.node(v).level == 1) return {v};
  for (const LinkId l : f.out_links(v)) {
    if (f.link(l).up) continue;
    const auto below = leaves_below(f, f.link(l).to);
    out.insert(below.begin(), below.end());
  }
  return out;
}

TEST(Routing, NextLinksAreUpLinksOrExactlyTheDownLinks) {
  for (const Shape& s : kShapes) {
    if (s.gpus > 128) continue;
    SCOPED_TRACE(shape_name(s));
    const Fabric f = build(s);
    for (NodeId v = first_switch(f); v < f.node_count(); ++v) {
      std::vector<LinkId> ups;
      for (const LinkId l : f.out_links(v)) {
        if (f.link(l).up) ups.push_back(l);
      }
      const auto below = leaves_below(f, v);
      for (GpuId dst = 0; dst < s.gpus; ++dst) {
        const NodeId dst_leaf = f.link(f.nic_links(dst).front()).to;
        std::vector<LinkId> expected;
        if (v == dst_leaf) {
          for (const LinkId l : f.out_links(v)) {
            if (f.link(l).to == f.gpu_node(dst)) expected.push_back(l);
          }
          ASSERT_EQ(expected.size(), 1u);
        } else if (below.contains(dst_leaf)) {
          for (const LinkId l : f.out_links(v)) {
            if (!f.link(l).up && leaves_below(f, f.link(l).to).contains(dst_leaf)) {
              expected.push_back(l);
            }
          }
          ASSERT_FALSE(expected.empty());
        } else {
          expected = ups;
        }
        const auto got_span = f.next_links(v, dst);
        std::vector<LinkId> got(got_span.begin(), got_span.end());
        std::sort(got.begin(), got.end());
        std::sort(expected.begin(), expected.end());
        ASSERT_EQ(got, expected) << "at node " << v << " (level " << int{f.node(v).level}
                                 << ") towards GPU " << dst;
      }
    }
  }
}

TEST(Routing, UpLinkCountsPerLevel) {
  // radix 8, 2:1 leaves: 2 up links per leaf; 4:1 aggregation: 1 per aggregation switch.
  const Fabric f = build_fat_tree(fat_spec(3, 8, 128, 1, 2, 4));
  const NodeId leaf0 = first_switch(f);
  EXPECT_EQ(f.next_links(leaf0, 127).size(), 2u);  // other pod: up
  EXPECT_EQ(f.next_links(leaf0, 4).size(), 2u);    // same pod, other leaf: up
  EXPECT_EQ(f.next_links(leaf0, 3).size(), 1u);    // below
  const NodeId agg0 = leaf0 + 32;
  EXPECT_EQ(f.node(agg0).level, 2);
  EXPECT_EQ(f.next_links(agg0, 127).size(), 1u);  // up to its one core
  EXPECT_TRUE(f.link(f.next_links(agg0, 127).front()).up);
  EXPECT_EQ(f.next_links(agg0, 4).size(), 1u);  // down to leaf 1
  EXPECT_FALSE(f.link(f.next_links(agg0, 4).front()).up);
  EXPECT_EQ(f.link(f.next_links(agg0, 4).front()).to, leaf0 + 1);
}

TEST(Routing, EcmpIsDeterministic) {
  const Fabric a = build_fat_tree(fat_spec(3, 8, 128, 8));
  const Fabric b = build_fat_tree(fat_spec(3, 8, 128, 8));
  for (NodeId v = first_switch(a); v < a.node_count(); ++v) {
    for (GpuId dst = 0; dst < 128; dst += 5) {
      for (std::uint64_t h = 0; h < 20; ++h) {
        const std::uint64_t hash = h * 0x100000001b3ull;
        const LinkId l = a.ecmp_link(v, dst, hash);
        ASSERT_EQ(l, a.ecmp_link(v, dst, hash));
        ASSERT_EQ(l, b.ecmp_link(v, dst, hash));
        const auto next = a.next_links(v, dst);
        ASSERT_NE(std::find(next.begin(), next.end(), l), next.end());
      }
    }
  }
}

TEST(Routing, EcmpSpreadsFlowsOverEveryUplink) {
  for (const auto& spec : {fat_spec(2, 16, 128, 8), fat_spec(2, 64, 2048, 8),
                           fat_spec(3, 8, 128, 8), fat_spec(3, 16, 1024, 8, 1, 2)}) {
    const Fabric f = build_fat_tree(spec);
    SCOPED_TRACE(f.description());
    const GpuId last = f.gpu_count() - 1;  // on the last leaf (and pod)
    for (NodeId v = first_switch(f); v < f.node_count(); ++v) {
      const Node& n = f.node(v);
      std::set<LinkId> ups;
      for (const LinkId l : f.out_links(v)) {
        if (f.link(l).up) ups.insert(l);
      }
      if (ups.empty()) continue;
      const bool below = leaves_below(f, v).contains(f.link(f.nic_links(last).front()).to);
      if (below) continue;
      std::set<LinkId> chosen;
      for (std::uint64_t h = 0; h < 64 * ups.size(); ++h) chosen.insert(f.ecmp_link(v, last, h));
      ASSERT_EQ(chosen, ups) << "level " << int{n.level} << " node " << v;
    }
  }
}

TEST(Routing, EcmpSpreadsFlowsOfOneDestinationAcrossSpines) {
  // Flows from one leaf to one GPU on another leaf: with many flow hashes, each
  // spine carries some of them and none carries them all.
  const Fabric f = build_fat_tree(fat_spec(2, 16, 128, 1));
  const NodeId leaf0 = first_switch(f);
  std::map<NodeId, int> per_spine;
  for (std::uint64_t h = 0; h < 800; ++h) ++per_spine[f.link(f.ecmp_link(leaf0, 127, h)).to];
  ASSERT_EQ(per_spine.size(), 8u);
  for (const auto& [spine, flows] : per_spine) {
    EXPECT_GT(flows, 40) << spine;  // ~100 each
    EXPECT_LT(flows, 200) << spine;
  }
}

}  // namespace
}  // namespace shoal::topo
