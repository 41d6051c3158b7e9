#include <gtest/gtest.h>

#include "shoal/net/cell_head.hpp"

namespace shoal::net {
namespace {

void expect_round_trip(const CellHead& h) {
  const CellHead back = CellHead::unpack(h.pack());
  EXPECT_EQ(back.flow, h.flow);
  EXPECT_EQ(back.bytes, h.bytes);
  EXPECT_EQ(back.cls, h.cls);
  EXPECT_EQ(back.slow, h.slow);
  EXPECT_EQ(back.last, h.last);
  EXPECT_EQ(CellHead::flow_of(h.pack()), h.flow);
  EXPECT_EQ(CellHead::class_of(h.pack()), h.cls);
}

TEST(CellHead, EveryFieldSurvivesAtItsLimits) {
  expect_round_trip({0, 1, 0, false, false});
  // The largest cell: its size once wrapped to 0 and spilled into the class.
  expect_round_trip({0, kMaxCell, 0, false, false});
  expect_round_trip({~std::uint32_t{0}, kMaxCell, 7, true, true});
  expect_round_trip({12345, 4096, 3, true, false});
  expect_round_trip({7, kMaxCell - 1, 5, false, true});
}

}  // namespace
}  // namespace shoal::net
