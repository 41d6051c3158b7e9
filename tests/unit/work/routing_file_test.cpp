// Routing files (work/routing_file.hpp): token counts per expert become the
// EP members' weights; every mistake is one line naming the file and line or
// the missing (iteration, layer, micro-batch); the traffic follows the file.
#include "shoal/work/routing_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "training_cases.hpp"

namespace shoal::work {
namespace {

using namespace test_jobs;
using test::error_of;

/// small_moe on one stage: layers 2-4 are MoE, 16 experts over EP 4, 2 micro-batches.
JobSpec routed_job() {
  JobSpec j = small_moe();
  j.parallel.tp = 1;
  j.parallel.pp = 1;
  j.parallel.micro_batches = 2;
  return j;
}

class RoutingFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("shoal_routing_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".csv"))
                .string();
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  /// A whole file: `hot` tokens to expert `hot_expert`, 10 to the others.
  static std::string full(std::uint32_t iterations, std::uint32_t hot_expert, int hot) {
    std::string text = "iteration,layer,micro_batch,expert,tokens\n";
    for (std::uint32_t it = 0; it < iterations; ++it) {
      for (int layer = 2; layer <= 4; ++layer) {
        for (int mb = 0; mb < 2; ++mb) {
          for (std::uint32_t e = 0; e < 16; ++e) {
            text += std::to_string(it) + "," + std::to_string(layer) + "," + std::to_string(mb) +
                    "," + std::to_string(e) + "," +
                    std::to_string(e == hot_expert + it ? hot : 10) + "\n";
          }
        }
      }
    }
    return text;
  }
  std::string path_;
};

TEST_F(RoutingFile, CountsBecomeMemberWeights) {
  const JobSpec job = routed_job();
  // Expert 5 (member 1: experts 4-7) gets 130 tokens, the other 15 get 10:
  // 280 in all, 70 a member on average; member 1 holds 160.
  const RoutingTable table = RoutingTable::read(write(full(2, 5, 130)), job);
  EXPECT_EQ(table.iterations(), 2u);
  const std::vector<double>& w = table.weights(0, 1, 0);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_DOUBLE_EQ(w[1], 160.0 / 70.0);
  EXPECT_DOUBLE_EQ(w[0], 40.0 / 70.0);
  // Iteration 1 moves the hot expert to 6 (still member 1); iteration 2 repeats 0.
  EXPECT_DOUBLE_EQ(table.weights(1, 3, 1)[1], 160.0 / 70.0);
  EXPECT_EQ(table.weights(2, 1, 0), table.weights(0, 1, 0));
}

TEST_F(RoutingFile, TheTrafficFollowsTheFile) {
  JobSpec job = routed_job();
  job.skew.routing_file = write(full(1, 9, 130));  // member 2 is hot
  const Dag dag = generate(job, 16);
  for (const Coflow& c : dag.coflows()) {
    if (c.labels.type != CoflowType::kEp || !c.name.ends_with(".f.ep0.0.to")) continue;
    Bytes to_hot = 0, to_cold = 0;
    for (const Flow& f : dag.flows_of(c)) {
      if (f.src == 0 && f.dst == 2) to_hot = f.bytes;
      if (f.src == 0 && f.dst == 1) to_cold = f.bytes;
    }
    // base = 512 x 2 x 1024 x 2 / 4 = 524,288 per expert copy, times the weights.
    EXPECT_EQ(to_hot, std::llround(524'288.0 * 160.0 / 70.0));
    EXPECT_EQ(to_cold, std::llround(524'288.0 * 40.0 / 70.0));
    return;
  }
  ADD_FAILURE() << "no dispatch found";
}

// Experts 0-3 get 100 tokens, the other 12 get 10: in order they all sit on
// member 0 (weight 400 / 130 = 3.08); NIC-aware placement puts one on each
// member (130 each: every weight 1), as round-robin (e mod 4) does here.
TEST_F(RoutingFile, NicAwarePlacementBalancesTheMembers) {
  std::string text = "iteration,layer,micro_batch,expert,tokens\n";
  for (int layer = 2; layer <= 4; ++layer) {
    for (int mb = 0; mb < 2; ++mb) {
      for (int e = 0; e < 16; ++e) {
        text += "0," + std::to_string(layer) + "," + std::to_string(mb) + "," + std::to_string(e) +
                "," + (e < 4 ? "100" : "10") + "\n";
      }
    }
  }
  const std::string p = write(text);
  JobSpec job = routed_job();
  EXPECT_DOUBLE_EQ(RoutingTable::read(p, job).weights(0, 1, 0)[0], 400.0 / 130.0);
  for (const ExpertPlacement placement :
       {ExpertPlacement::kNicAware, ExpertPlacement::kRoundRobin}) {
    job.ep_comm.placement = placement;
    const RoutingTable table = RoutingTable::read(p, job);
    for (const double w : table.weights(0, 2, 1)) EXPECT_DOUBLE_EQ(w, 1.0);
  }
  // NIC-aware keeps each member's count of experts.
  std::vector<double> load(16, 10.0);
  load[0] = load[1] = load[2] = load[3] = 100.0;
  job.ep_comm.placement = ExpertPlacement::kNicAware;
  const std::vector<std::uint32_t> member = place_experts(job, load);
  std::vector<int> count(4, 0);
  for (const std::uint32_t g : member) ++count[g];
  EXPECT_EQ(count, (std::vector<int>{4, 4, 4, 4}));
  EXPECT_EQ(member[0], 0u);
  EXPECT_EQ(member[3], 3u);
  // Without per-expert loads there is nothing to place by.
  JobSpec no_file = routed_job();
  no_file.ep_comm.placement = ExpertPlacement::kNicAware;
  EXPECT_TRUE(test::Has(error_of([&] { no_file.resolve(16); }),
                        "moe.expert_placement needs each expert's load: give a routing file"));
}

TEST_F(RoutingFile, MistakesAreOneLineNamingFileAndLine) {
  const JobSpec job = routed_job();
  std::string p = write("iteration,layer,expert,tokens\n");
  EXPECT_EQ(error_of([&] { RoutingTable::read(p, job); }),
            "routing file " + p +
                ", line 1: the header must be iteration,layer,micro_batch,expert,tokens");
  p = write("iteration,layer,micro_batch,expert,tokens\n0,2,0,16,5\n");
  EXPECT_EQ(error_of([&] { RoutingTable::read(p, job); }),
            "routing file " + p + ", line 2: expert 16 is out of range (0 to 15)");
  p = write("iteration,layer,micro_batch,expert,tokens\n0,1,0,3,5\n");
  EXPECT_EQ(error_of([&] { RoutingTable::read(p, job); }),
            "routing file " + p + ", line 2: layer 1 is not an MoE layer of the model");
  p = write("iteration,layer,micro_batch,expert,tokens\n0,2,0,3,-5\n");
  EXPECT_EQ(error_of([&] { RoutingTable::read(p, job); }),
            "routing file " + p + ", line 2: tokens \"-5\" is not a whole number of at least 0");
  p = write("iteration,layer,micro_batch,expert,tokens\n0,2,0,3,5\n");
  EXPECT_EQ(error_of([&] { RoutingTable::read(p, job); }),
            "routing file " + p + ": no rows for iteration 0, layer 2, micro_batch 1");
  p = write("iteration,layer,micro_batch,expert,tokens\n0,2,2,3,5,1\n");
  EXPECT_EQ(error_of([&] { RoutingTable::read(p, job); }),
            "routing file " + p + ", line 2: expected 5 fields, found 6");
}

}  // namespace
}  // namespace shoal::work
