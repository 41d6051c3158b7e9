// Per-step expert swaps (docs/training.md, "Per-step expert swaps"): after an
// iteration, the hottest member trades its hottest expert for the coldest
// expert of the coldest member on its server when that lowers the larger
// load; each swap is one coflow per EP group of two flows of the expert's
// parameters in the model's dtype, which the next iteration's experts wait
// for; the next iteration's traffic and compute follow the new placement.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "shoal/work/overlap_spec.hpp"
#include "training_cases.hpp"

namespace shoal::work {
namespace {

class ExpertSwaps : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("shoal_swap_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".csv"))
                .string();
    // Layer 1: expert 0 hot (100 tokens), 6 and 7 cold (5), 10 and 20 for the
    // others; layer 2 uniform. One iteration, repeated by the second.
    const int tokens[8] = {100, 10, 20, 20, 20, 20, 5, 5};
    std::ofstream out(path_);
    out << "iteration,layer,micro_batch,expert,tokens\n";
    for (int layer = 1; layer <= 2; ++layer) {
      for (int mb = 0; mb < 2; ++mb) {
        for (int e = 0; e < 8; ++e) {
          out << "0," << layer << "," << mb << "," << e << "," << (layer == 1 ? tokens[e] : 20)
              << "\n";
        }
      }
    }
  }
  void TearDown() override { std::filesystem::remove(path_); }

  /// Two MoE layers of 8 experts (top-2) over EP 4 on 8 GPUs (two EP groups),
  /// two micro-batches, two iterations, servers of `per_server` GPUs.
  Dag generate(std::uint32_t per_server, std::uint64_t state_bytes = 0) {
    JobSpec j;
    j.file = "swap-job";
    j.model = {"swap", 2, 1024, 8, 0, 0, 0, 64, true, 2, 8, 2, 512, 0, 0};
    j.parallel.ep = 4;
    j.parallel.micro_batches = 2;
    j.parallel.micro_batch_tokens = 64;
    j.parallel.iterations = 2;
    j.skew.routing_name = path_;
    j.skew.routing_file = path_;
    j.overlap.expert_swap = ExpertSwap::kPerStep;
    j.overlap.swap_state_bytes = state_bytes;
    j.resolve(8, per_server);
    job_ = j;
    Dag dag;
    add_training_job(job_, dag);
    dag.resolve();
    dag.validate(8);
    return dag;
  }
  std::vector<std::string> swaps(const Dag& dag) const {
    std::vector<std::string> names;
    for (const Coflow& c : dag.coflows()) {
      if (c.name.find(".swap.") != std::string::npos) names.emplace_back(c.name);
    }
    return names;
  }
  Time duration(const Dag& dag, const std::string& name) const {
    const auto t = dag.find(name);
    EXPECT_TRUE(t.has_value()) << name;
    return t ? dag.tasks()[t->index].duration : -1;
  }

  std::string path_;
  JobSpec job_;
};

TEST_F(ExpertSwaps, TheHotExpertMovesToTheColdMemberAndTheNextIterationFollows) {
  const Dag dag = generate(4);  // each EP group on one server
  // Layer 1: member 0 holds 110 tokens a micro-batch (experts 0, 1), member 3
  // 10 (6, 7): expert 0 for expert 6 leaves 15 and 105, under 110. Layer 2 is
  // even: no swap lowers its largest load. Nothing after the last iteration.
  ASSERT_EQ(swaps(dag),
            (std::vector<std::string>{"j0.i0.L1.swap.s0.ep0.0", "j0.i0.L1.swap.s0.ep0.1"}));
  // Per direction: the expert's 3 x 1024 x 512 parameters in bf16.
  const Bytes expert = 3 * 1024 * 512 * 2;
  const Coflow& c = dag.coflows()[dag.find("j0.i0.L1.swap.s0.ep0.1")->index];
  ASSERT_EQ(c.flow_count, 2u);
  EXPECT_EQ(dag.flows_of(c)[0].src, 4u);
  EXPECT_EQ(dag.flows_of(c)[0].dst, 7u);
  EXPECT_EQ(dag.flows_of(c)[1].src, 7u);
  EXPECT_EQ(dag.flows_of(c)[1].dst, 4u);
  for (const Flow& f : dag.flows_of(c)) EXPECT_EQ(f.bytes, expert);
  // Member 3's experts did 10 of 200 tokens a micro-batch (weight 0.2), now
  // 105 (2.1); member 0's 110 (2.2), now 15 (0.3); summed by expert as the
  // weights are, to the picosecond.
  EXPECT_EQ(duration(dag, "j0.i0.g3.F0.L1.f"), ffn_time(job_, 0, 5.0 * 4 / 200 + 5.0 * 4 / 200));
  EXPECT_EQ(duration(dag, "j0.i1.g3.F0.L1.f"), ffn_time(job_, 0, 100.0 * 4 / 200 + 5.0 * 4 / 200));
  EXPECT_EQ(duration(dag, "j0.i0.g0.F1.L1.f"), ffn_time(job_, 0, 100.0 * 4 / 200 + 10.0 * 4 / 200));
  EXPECT_EQ(duration(dag, "j0.i1.g0.F1.L1.f"), ffn_time(job_, 0, 10.0 * 4 / 200 + 5.0 * 4 / 200));
  EXPECT_EQ(duration(dag, "j0.i1.g1.F0.L2.f"), duration(dag, "j0.i0.g1.F0.L2.f"));
  // The next iteration's first pass through the moved experts waits for them.
  const ComputeTask& next = dag.tasks()[dag.find("j0.i1.g3.F0.L1.f")->index];
  bool waits = false;
  for (const NodeRef n : next.after) waits = waits || dag.name(n) == "j0.i0.L1.swap.s0.ep0.0";
  EXPECT_TRUE(waits);
  // The dispatch to member 3 grows with its weight.
  auto to_member3 = [&](const std::string& name) {
    const Coflow& d = dag.coflows()[dag.find(name)->index];
    for (const Flow& f : dag.flows_of(d)) {
      if (f.src == 0 && f.dst == 3) return f.bytes;
    }
    return Bytes{-1};
  };
  EXPECT_LT(to_member3("j0.i0.m0.L1.f.ep0.0.to"), to_member3("j0.i1.m0.L1.f.ep0.0.to"));
}

// With mixed-precision Adam's 12 bytes of state per parameter, each GPU moves
// its shard of the expert's state (expert DP 2 here: two EP groups) with the
// weights; nothing else in the DAG changes.
TEST_F(ExpertSwaps, OptimizerStateMovesItsShardWithTheWeights) {
  const Dag weights = generate(4);
  const Dag state = generate(4, 12);
  const Bytes params = 3 * 1024 * 512;
  const Coflow& c = state.coflows()[state.find("j0.i0.L1.swap.s0.ep0.1")->index];
  for (const Flow& f : state.flows_of(c)) EXPECT_EQ(f.bytes, params * 2 + params * 12 / 2);
  EXPECT_EQ(state.total_bytes() - weights.total_bytes(), 2 * 2 * params * 12 / 2);
  EXPECT_EQ(swaps(state), swaps(weights));
  JobSpec alone = job_;
  alone.overlap.expert_swap = ExpertSwap::kNone;
  EXPECT_TRUE(
      test::Has(test::error_of([&] { check_overlap(alone, "job j: "); }),
                "job j: moe.expert_swap_state_bytes (12) needs expert_swap = \"per-step\""));
}

TEST_F(ExpertSwaps, OnlyInsideAServerAndOnlyWhenTheLargerLoadDrops) {
  // Servers of 2: member 0's only partner is member 1 (40 tokens): expert 0
  // for expert 2 would leave it 120, above 110. No swap; nothing changes.
  const Dag dag = generate(2);
  EXPECT_TRUE(swaps(dag).empty());
  EXPECT_EQ(duration(dag, "j0.i1.g0.F0.L1.f"), duration(dag, "j0.i0.g0.F0.L1.f"));
}

TEST_F(ExpertSwaps, AreDeterministic) {
  const Dag a = generate(4);
  const Dag b = generate(4);
  ASSERT_EQ(a.coflows().size(), b.coflows().size());
  ASSERT_EQ(a.all_flows().size(), b.all_flows().size());
  for (std::size_t i = 0; i < a.coflows().size(); ++i) {
    EXPECT_EQ(a.coflows()[i].name, b.coflows()[i].name);
  }
  for (std::size_t i = 0; i < a.all_flows().size(); ++i) {
    EXPECT_EQ(a.all_flows()[i].bytes, b.all_flows()[i].bytes);
    EXPECT_EQ(a.all_flows()[i].dst, b.all_flows()[i].dst);
  }
  for (std::size_t i = 0; i < a.tasks().size(); ++i) {
    EXPECT_EQ(a.tasks()[i].duration, b.tasks()[i].duration);
  }
}

}  // namespace
}  // namespace shoal::work
