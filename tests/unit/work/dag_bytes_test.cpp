// A DAG sums its bytes in 64 bits (Dag::add_bytes): a workload past them is
// refused with one error, not wrapped round into a negative total.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "error_checks.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::work {
namespace {

using shoal::test::error_of;
using shoal::test::Has;

TEST(DagBytes, PastSixtyFourBitsAreRefusedNotWrapped) {
  const Bytes half = std::numeric_limits<Bytes>::max() / 2 + 1;
  const std::vector<Flow> one{{0, 1, half}};
  Dag dag;
  dag.add_coflow("a", {}, 0, one, {});
  EXPECT_EQ(dag.total_bytes(), half);
  // The DAG's total, across coflows.
  EXPECT_TRUE(Has(error_of([&] { dag.add_coflow("b", {}, 0, one, {}); }),
                  "workload: its bytes pass what 64 bits hold"));
  // One coflow's own sum, across its flows.
  const std::vector<Flow> two{{0, 1, half}, {1, 0, half}};
  Dag other;
  EXPECT_TRUE(Has(error_of([&] { other.add_coflow("c", {}, 0, two, {}); }),
                  "workload: its bytes pass what 64 bits hold"));
}

}  // namespace
}  // namespace shoal::work
