// The links' counters a rank keeps (net/link_meters.hpp): only those of the
// links it sends on are made, and every other link reads as zero.
#include "shoal/net/link_meters.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "../contending_dag.hpp"

namespace shoal::net {
namespace {

TEST(LinkMeters, CountsTheLinksARankSendsOnAndReadsZeroElsewhere) {
  const topo::Fabric fabric = test::contending_leaf_spine(1);
  NetworkOptions options;
  options.record = true;
  const std::vector<BitsPerSecond> unperturbed(fabric.link_count(), 0);
  const auto here = [](topo::LinkId l) { return l % 3 == 0; };
  LinkMeters meters(fabric, options, here, unperturbed);
  ASSERT_TRUE(meters.on());
  ASSERT_GT(fabric.link_count(), 6u);
  for (topo::LinkId l = 0; l < fabric.link_count(); ++l) {
    if (here(l)) meters.count(l, 1, 100 + l, 0, 10);
  }
  for (topo::LinkId l = 0; l < fabric.link_count(); ++l) {
    EXPECT_EQ(meters.bytes(l, 1), here(l) ? 100 + l : 0) << "link " << l;
    EXPECT_EQ(meters.bytes(l, 0), 0u) << "link " << l;
    EXPECT_EQ(meters.busy(l), here(l) ? 10u : 0u) << "link " << l;
  }
}

}  // namespace
}  // namespace shoal::net
