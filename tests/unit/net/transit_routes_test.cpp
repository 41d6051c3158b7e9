// TransitRoutes: a flow's route stays while any of its cells is on the rank,
// through the table's growth and deletions, against a plain count; a route
// asked for or left that is not there is an internal error.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

#include "shoal/core/error.hpp"
#include "shoal/net/transit_routes.hpp"

namespace shoal::net {
namespace {

using work::FlowId;

TEST(TransitRoutes, KeepsARouteWhileAnyOfItsCellsIsHere) {
  TransitRoutes routes;
  routes.arrive(FlowId{7}, 3);
  routes.arrive(FlowId{7}, 3);
  routes.arrive(FlowId{9}, 5);
  EXPECT_EQ(routes.size(), 2u);
  EXPECT_EQ(routes.dst(FlowId{7}), 3u);
  EXPECT_EQ(routes.dst(FlowId{9}), 5u);
  routes.leave(FlowId{7});
  EXPECT_EQ(routes.dst(FlowId{7}), 3u);  // one cell of it is still here
  routes.leave(FlowId{7});
  EXPECT_EQ(routes.size(), 1u);
  EXPECT_THROW(routes.dst(FlowId{7}), Error);
  EXPECT_THROW(routes.leave(FlowId{7}), Error);
  EXPECT_EQ(routes.dst(FlowId{9}), 5u);
  EXPECT_EQ(routes.arrivals(), 3);
}

TEST(TransitRoutes, MatchesAPlainCountThroughGrowthAndDeletions) {
  std::mt19937_64 rng(11);
  TransitRoutes routes;
  std::map<std::uint32_t, int> cells;  // the plain count
  std::size_t most = 0;
  for (int step = 0; step < 200'000; ++step) {
    // Arrivals first, then as many departures: the table grows, then empties.
    const bool arrive = step < 100'000 ? rng() % 3 != 0 : rng() % 3 == 0;
    if (arrive || cells.empty()) {
      const auto flow = static_cast<std::uint32_t>(rng() % 20'000);
      routes.arrive(FlowId{flow}, flow * 7 + 1);
      ++cells[flow];
    } else {
      auto it = cells.lower_bound(static_cast<std::uint32_t>(rng() % 20'000));
      if (it == cells.end()) it = cells.begin();
      routes.leave(FlowId{it->first});
      if (--it->second == 0) cells.erase(it);
    }
    most = std::max(most, cells.size());
    ASSERT_EQ(routes.size(), cells.size()) << "step " << step;
  }
  EXPECT_GT(most, 5'000u) << "the table never grew far";
  for (const auto& [flow, n] : cells) ASSERT_EQ(routes.dst(FlowId{flow}), flow * 7 + 1);
  for (std::uint32_t flow = 0; flow < 20'000; ++flow) {
    if (!cells.contains(flow)) {
      EXPECT_THROW(routes.dst(FlowId{flow}), Error) << flow;
    }
  }
}

}  // namespace
}  // namespace shoal::net
