// A rank's fragment counts, and does not make, the flows of an EP all-to-all
// among GPUs none of which concerns it (work::Dag::holds_no_flow_among): in
// every ep_dedup mode, with skew, and chunked (overlap = "chunked"), each rank of four holds
// exactly the flows it would keep of the whole DAG's, with the whole DAG's ids and bytes.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "shoal/exec/fragment.hpp"
#include "shoal/net/network_options.hpp"
#include "shoal/topo/fabric_config.hpp"
#include "work/training_cases.hpp"

namespace shoal::exec {
namespace {

using work::test_jobs::eight_leaf_fat_tree;
using work::test_jobs::generate;

struct EpCase {
  std::string name;
  work::EpDedup dedup = work::EpDedup::kAuto;
  std::uint32_t node_limit = 0;
  double zipf = 0;
  std::uint32_t chunks = 1;  // overlap = "chunked" above 1
};
void PrintTo(const EpCase& c, std::ostream* os) { *os << c.name; }

work::JobSpec ep_job(const EpCase& c) {
  work::JobSpec j = work::test_jobs::small_moe();
  j.parallel.tp = 1;
  j.parallel.ep = 8;
  j.model.node_limit = c.node_limit;
  j.ep_comm.dedup = c.dedup;
  j.skew.zipf = c.zipf;
  if (c.chunks > 1) {
    j.overlap.mode = work::Overlap::kChunked;
    j.overlap.chunks = c.chunks;
  }
  return j;
}

class CountedCoflows : public testing::TestWithParam<EpCase> {};

TEST_P(CountedCoflows, EachRankHoldsWhatItKeepsOfTheWholeDag) {
  const topo::Fabric fabric = eight_leaf_fat_tree();
  const net::NetworkOptions network;
  const core::Partition partition = topo::partition_fabric(fabric, 4, "topology");
  work::JobSpec job = ep_job(GetParam());
  const work::Dag whole = generate(job, 64);  // resolves the job
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    work::Dag part;
    part.set_fragment(rank_fragment(fabric, network, partition, rank));
    work::add_training_job(job, part);
    part.resolve();
    part.validate(64);
    EXPECT_GT(part.counted_coflows(), 0u) << "every coflow's flows made: nothing tested";
    EXPECT_LT(part.counted_coflows(), part.coflows().size());
    ASSERT_EQ(part.flow_count(), whole.flow_count());
    EXPECT_EQ(part.total_bytes(), whole.total_bytes());
    EXPECT_EQ(part.gpus_used(), whole.gpus_used());
    ASSERT_EQ(part.coflows().size(), whole.coflows().size());
    for (std::size_t c = 0; c < whole.coflows().size(); ++c) {
      const work::Coflow& p = part.coflows()[c];
      const work::Coflow& w = whole.coflows()[c];
      ASSERT_EQ(p.first_flow, w.first_flow) << w.name;
      ASSERT_EQ(p.flow_count, w.flow_count) << w.name;
      ASSERT_EQ(p.bytes, w.bytes) << w.name;
    }
    const work::DagFragment fragment = rank_fragment(fabric, network, partition, rank);
    std::size_t held = 0;
    for (std::uint32_t f = 0; f < whole.flow_count(); ++f) {
      const work::Flow& w = whole.flow(work::FlowId{f});
      ASSERT_EQ(part.holds(work::FlowId{f}), fragment.keep(w)) << "flow " << f;
      if (!part.holds(work::FlowId{f})) continue;
      ++held;
      const work::Flow& p = part.flow(work::FlowId{f});
      EXPECT_EQ(p.src, w.src);
      EXPECT_EQ(p.dst, w.dst);
      EXPECT_EQ(p.bytes, w.bytes);
    }
    EXPECT_EQ(held, part.held_count());
  }
}

INSTANTIATE_TEST_SUITE_P(EpDedup, CountedCoflows,
                         testing::Values(EpCase{"PerExpert", work::EpDedup::kPerExpert},
                                         EpCase{"PerGpu", work::EpDedup::kPerGpu},
                                         EpCase{"PerNode", work::EpDedup::kPerNode},
                                         EpCase{"PerNodeLimited", work::EpDedup::kPerNode, 1},
                                         EpCase{"NodeLimitedRelay", work::EpDedup::kAuto, 1},
                                         EpCase{"PerExpertZipf", work::EpDedup::kPerExpert, 0, 1.2},
                                         EpCase{"PerGpuZipf", work::EpDedup::kPerGpu, 0, 1.2},
                                         EpCase{"Chunked", work::EpDedup::kPerExpert, 0, 0, 3}),
                         [](const testing::TestParamInfo<EpCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace shoal::exec
