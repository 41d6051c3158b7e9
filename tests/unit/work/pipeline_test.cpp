// Pipeline schedules (docs/training.md, "Pipelines"): the order of each
// rank's steps against Megatron's, the iteration against the closed forms on
// an infinitely fast network (network.model = "instant"), exact to the
// picosecond, uneven stages, and one-line errors for impossible combinations.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_checks.hpp"
#include "shoal/work/pipeline_schedule.hpp"
#include "training_cases.hpp"

namespace shoal::work {
namespace {

using namespace test_jobs;
using test::error_of;
using test::Has;

/// "F(chunk,mb)" and "B(chunk,mb)" for a rank's steps.
std::string order(const std::vector<PipelineStep>& steps) {
  std::string text;
  for (const PipelineStep& s : steps) {
    text += (s.forward ? "F(" : "B(") + std::to_string(s.chunk) + "," +
            std::to_string(s.micro_batch) + ") ";
  }
  return text;
}

TEST(PipelineSteps, OneFOneBWarmsUpWithTheStagesAfterIt) {
  EXPECT_EQ(order(pipeline_steps(PpSchedule::k1F1B, 0, 2, 1, 3)),
            "F(0,0) F(0,1) B(0,0) F(0,2) B(0,1) B(0,2) ");
  EXPECT_EQ(order(pipeline_steps(PpSchedule::k1F1B, 1, 2, 1, 3)),
            "F(0,0) B(0,0) F(0,1) B(0,1) F(0,2) B(0,2) ");
  // PipeMorph's extra warm-up, on every rank but the last.
  EXPECT_EQ(order(pipeline_steps(PpSchedule::k1F1B, 0, 2, 1, 3, 1)),
            "F(0,0) F(0,1) F(0,2) B(0,0) B(0,1) B(0,2) ");
}

// Megatron's interleaved schedule for PP 2, 2 chunks, 4 micro-batches: rank r
// warms up with 2(p - r - 1) + (v - 1)p forwards (4 and 2), virtual micro-batch
// k runs micro-batch (k / 4)·2 + k mod 2 through chunk (k mod 4) / 2 forward
// and through the other chunk backward.
TEST(PipelineSteps, InterleavedFollowsMegatronsTable) {
  EXPECT_EQ(order(pipeline_steps(PpSchedule::kInterleaved, 0, 2, 2, 4)),
            "F(0,0) F(0,1) F(1,0) F(1,1) F(0,2) B(1,0) F(0,3) B(1,1) F(1,2) B(0,0) "
            "F(1,3) B(0,1) B(1,2) B(1,3) B(0,2) B(0,3) ");
  EXPECT_EQ(order(pipeline_steps(PpSchedule::kInterleaved, 1, 2, 2, 4)),
            "F(0,0) F(0,1) F(1,0) B(1,0) F(1,1) B(1,1) F(0,2) B(0,0) F(0,3) B(0,1) "
            "F(1,2) B(1,2) F(1,3) B(1,3) B(0,2) B(0,3) ");
  EXPECT_EQ(chunk_stage(1, 2, 1), 3u);  // chunk 1 of rank 1: virtual stage 1·2 + 1
}

/// A dense job of PP p with v chunks a rank, 2 equal layers a chunk, no
/// vocabulary (so no LM head), and m micro-batches on p GPUs.
JobSpec pipeline_job(std::uint32_t p, std::uint32_t v, std::uint32_t m) {
  JobSpec job = tiny_dense(m);
  job.model.layers = 2 * p * v;
  job.model.vocab = 0;
  job.parallel.pp = p;
  job.schedule.virtual_stages = v;
  job.schedule.pp_schedule = v > 1 ? PpSchedule::kInterleaved : PpSchedule::k1F1B;
  return job;
}

/// The iteration on an infinitely fast network: the last task's end.
Time instant_iteration(JobSpec& job) {
  topo::FabricSpec spec;
  spec.gpus = job.parallel.pp;
  spec.gpus_per_server = 1;
  const topo::Fabric fabric = topo::build_single_switch(spec);
  const Dag dag = generate(job, job.parallel.pp);
  net::NetworkOptions options;
  options.instant = true;
  return last_task_end(test::run_one_rank(fabric, dag, options, {}, {}, true).results);
}

/// One chunk's forward and backward of one micro-batch: its two layers.
std::pair<Time, Time> chunk_times(const JobSpec& job) {
  const Time f = attention_time(job, 0) + ffn_time(job, 0);
  return {2 * f, 2 * 2 * f};  // backward_factor 2: each part's time doubled exactly
}

// 1F1B: (m + p - 1)(F + B), F and B a stage's forward and backward of one
// micro-batch.
TEST(PipelineClosedForms, OneFOneBIsMPlusPMinusOneSlots) {
  for (const auto& [p, m] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {2, 2}, {2, 5}, {4, 4}, {4, 8}, {3, 7}}) {
    SCOPED_TRACE("p " + std::to_string(p) + ", m " + std::to_string(m));
    JobSpec job = pipeline_job(p, 1, m);
    const auto [f, b] = chunk_times(job);
    EXPECT_EQ(instant_iteration(job), static_cast<Time>(m + p - 1) * (f + b));
  }
}

// Interleaved 1F1B (Narayanan et al., SC'21, §2.2.2): (m + (p - 1)/v)(F + B)
// with F and B a device's totals over its v chunks: v·(f + b) per micro-batch,
// the bubble (p - 1)(f + b).
TEST(PipelineClosedForms, InterleavedCutsTheBubbleByTheChunks) {
  for (const auto& [p, v, m] : std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>>{
           {2, 2, 2}, {2, 2, 4}, {4, 2, 8}, {3, 3, 6}, {4, 4, 4}}) {
    SCOPED_TRACE("p " + std::to_string(p) + ", v " + std::to_string(v) + ", m " +
                 std::to_string(m));
    JobSpec job = pipeline_job(p, v, m);
    const auto [f, b] = chunk_times(job);
    const Time device = static_cast<Time>(v) * (f + b);
    EXPECT_EQ(instant_iteration(job), static_cast<Time>(m) * device + (p - 1) * (f + b));
  }
}

// Uneven stages put each stage's layers where stage_layers says: with [1, 3]
// stage 1 computes three times stage 0's layers, and the 1F1B iteration on an
// infinitely fast network is the slow stage's: f0 + m·(f1 + b1) + b0.
TEST(PipelineClosedForms, UnevenStagesFollowStageLayers) {
  JobSpec job = pipeline_job(2, 1, 4);
  job.model.layers = 4;
  job.schedule.stage_layers = {1, 3};
  const Time layer = attention_time(job, 0) + ffn_time(job, 0);
  const Time f0 = layer, b0 = 2 * layer, f1 = 3 * layer, b1 = 6 * layer;
  EXPECT_EQ(instant_iteration(job), f0 + 4 * (f1 + b1) + b0);
}

TEST(PipelineSchedule, ImpossibleCombinationsAreOneClearError) {
  JobSpec job = pipeline_job(4, 2, 6);  // 6 micro-batches on 4 ranks
  EXPECT_TRUE(Has(error_of([&] { job.resolve(4); }),
                  "schedule.pp_schedule = \"interleaved\" needs micro_batches (6) to be a "
                  "multiple of pp (4)"));
  job = pipeline_job(2, 2, 4);
  job.model.layers = 6;  // 4 virtual stages
  EXPECT_TRUE(Has(error_of([&] { job.resolve(2); }),
                  "model.layers (6) must divide by pp x virtual_stages (4), or give "
                  "schedule.stage_layers"));
  job.schedule.stage_layers = {1, 2, 2};
  EXPECT_TRUE(Has(error_of([&] { job.resolve(2); }),
                  "schedule.stage_layers has 3 stages; pp x virtual_stages is 4"));
  job.schedule.stage_layers = {1, 2, 2, 2};
  EXPECT_TRUE(Has(error_of([&] { job.resolve(2); }),
                  "schedule.stage_layers add up to 7 layers; the model has 6"));
  job = pipeline_job(2, 1, 4);
  job.schedule.virtual_stages = 2;
  EXPECT_TRUE(Has(error_of([&] { job.resolve(2); }),
                  "schedule.virtual_stages (2) needs pp_schedule = \"interleaved\""));
}

}  // namespace
}  // namespace shoal::work
