// Pipeline schedules (docs/training.md, "Pipelines"): the order of each
// rank's steps against Megatron's, the iteration against the closed forms on
// an infinitely fast network (network.model = "instant"), exact to the
// picosecond, uneven stages, and one-line errors for impossible combinations.
#include <gtest/gtest.h>

#include <algorithm>
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

/// "F(chunk,mb)", "B(chunk,mb)" and "W(chunk,mb)" for a rank's steps; a
/// split backward is "b(…)", an overlapped pair "[F(…)&B(…)]".
std::string order(const std::vector<PipelineStep>& steps) {
  std::string text;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const PipelineStep& s = steps[k];
    const char* kind = s.kind == PipelineStep::Kind::kForward  ? "F("
                       : s.kind == PipelineStep::Kind::kWeight ? "W("
                       : s.split                               ? "b("
                                                               : "B(";
    const std::string step =
        kind + std::to_string(s.chunk) + "," + std::to_string(s.micro_batch) + ")";
    if (s.with_next) {
      text += "[" + step + "&";
    } else {
      text += step + (k > 0 && steps[k - 1].with_next ? "] " : " ");
    }
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
  EXPECT_EQ(chunk_stage(PpSchedule::kInterleaved, 1, 2, 1), 3u);  // chunk 1 of rank 1: 1·2 + 1
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

// DualPipe (DualPipe.step): rank 0 of 4 holds stage 0 for micro-batches 0-3
// (chunk 0) and stage 3 for 4-7 (chunk 1). Its eight phases: three forwards of
// chunk 0, a forward of each chunk, a zero-bubble backward with its weights and
// a forward, then overlapped forward-and-backward pairs, and the split
// backwards of the end whose weights follow.
TEST(PipelineSteps, DualPipeFollowsDeepSeeksPhases) {
  EXPECT_EQ(order(pipeline_steps(PpSchedule::kDualPipe, 0, 4, 1, 8)),
            "F(0,0) F(0,1) F(0,2) F(1,4) b(1,4) W(1,4) F(1,5) [F(0,3)&B(1,5)] [F(1,6)&B(0,0)] "
            "B(1,6) [F(1,7)&B(0,1)] B(1,7) b(0,2) W(0,2) b(0,3) W(0,3) ");
  // The middle ranks' first pair of the main phase runs one step after the other.
  EXPECT_EQ(order(pipeline_steps(PpSchedule::kDualPipe, 1, 4, 1, 8)),
            "F(0,0) F(1,4) F(0,1) F(1,5) F(0,2) B(1,4) [F(1,6)&B(0,0)] [F(0,3)&B(1,5)] "
            "[F(1,7)&B(0,1)] B(1,6) B(0,2) b(1,7) b(0,3) W(1,7) W(0,3) ");
  EXPECT_EQ(chunk_stage(PpSchedule::kDualPipe, 0, 4, 1), 3u);
  EXPECT_EQ(stage_rank_of(PpSchedule::kDualPipe, 0, 4, 5, 8),
            3u);  // micro-batch 5 enters at rank 3
  for (std::uint32_t p : {2u, 4u, 6u, 8u}) {
    for (std::uint32_t r = 0; r < p; ++r) {
      SCOPED_TRACE("p " + std::to_string(p) + ", rank " + std::to_string(r));
      const std::uint32_t m = 3 * p;
      const std::vector<PipelineStep> steps = pipeline_steps(PpSchedule::kDualPipe, r, p, 1, 2 * m);
      // Each chunk runs its half of the micro-batches forward, then backward in
      // the same order; each split backward's weights follow it, first in first out.
      std::vector<std::uint32_t> forwards[2], backwards[2], split, weights;
      for (const PipelineStep& s : steps) {
        if (s.kind == PipelineStep::Kind::kForward) forwards[s.chunk].push_back(s.micro_batch);
        if (s.kind == PipelineStep::Kind::kBackward) backwards[s.chunk].push_back(s.micro_batch);
        if (s.kind == PipelineStep::Kind::kBackward && s.split) split.push_back(s.micro_batch);
        if (s.kind == PipelineStep::Kind::kWeight) weights.push_back(s.micro_batch);
      }
      for (std::uint32_t c = 0; c < 2; ++c) {
        std::vector<std::uint32_t> half(m);
        for (std::uint32_t i = 0; i < m; ++i) half[i] = c * m + i;
        EXPECT_EQ(forwards[c], half);
        EXPECT_EQ(backwards[c], half);
      }
      EXPECT_EQ(weights, split);
    }
  }
}

// DualPipe's bubble (DeepSeek-V3's report, Table 2): (PP/2 - 1)(F&B + B - 3W),
// over the m(F + B) each rank computes (two chunks, m/2 micro-batches each),
// with F, B and W a chunk's forward, full backward and weight backward of one
// micro-batch. On an infinitely fast network a pair overlaps nothing: F&B =
// F + B. Exact where a forward, an input-gradient backward and a weight
// backward take one time each (F = W = B/2, as the zero-bubble schedules
// assume, and Shoal's defaults: backward factor 2, weight_grad_share 0.5).
TEST(PipelineClosedForms, DualPipesBubbleIsDeepSeeksTable) {
  for (const auto& [p, m] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {2, 4}, {4, 8}, {4, 12}, {6, 12}, {8, 16}}) {
    SCOPED_TRACE("p " + std::to_string(p) + ", m " + std::to_string(m));
    JobSpec job = pipeline_job(p, 1, m);
    job.schedule.pp_schedule = PpSchedule::kDualPipe;
    const auto [f, b] = chunk_times(job);
    const Time w = b / 2;
    ASSERT_EQ(f, w);
    const Time pair = f + b;
    EXPECT_EQ(instant_iteration(job),
              static_cast<Time>(m) * (f + b) + static_cast<Time>(p / 2 - 1) * (pair + b - 3 * w));
  }
}

// Each stage lives on two ranks (r and p - 1 - r), whose gradients are summed:
// its DP group spans both.
TEST(PipelineSchedule, DualPipeReducesEachStageOverItsTwoRanks) {
  JobSpec job = pipeline_job(4, 1, 8);
  job.schedule.pp_schedule = PpSchedule::kDualPipe;
  job.parallel.gpus = 8;  // DP 2
  const Dag dag = generate(job, 8);
  const auto rs = dag.find("j0.i0.L1.dpd0.rs");  // stage 0's first layer
  ASSERT_TRUE(rs.has_value());
  const Coflow& c = dag.coflows()[rs->index];
  std::vector<GpuId> senders;
  for (const Flow& f : dag.flows_of(c)) senders.push_back(f.src);
  std::sort(senders.begin(), senders.end());
  // Ranks 0 and 3 of the pipeline, each with its two DP replicas: job ranks
  // 0, 1 (stage 0) and 6, 7 (stage 3), placed tp-ep-dp-pp.
  EXPECT_EQ(senders, (std::vector<GpuId>{0, 1, 6, 7}));
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
  job = pipeline_job(3, 1, 6);
  job.schedule.pp_schedule = PpSchedule::kDualPipe;
  EXPECT_TRUE(Has(error_of([&] { job.resolve(3); }),
                  "schedule.pp_schedule = \"dualpipe\" needs an even pp, not 3"));
  job = pipeline_job(4, 1, 6);
  job.schedule.pp_schedule = PpSchedule::kDualPipe;
  EXPECT_TRUE(Has(error_of([&] { job.resolve(4); }),
                  "needs an even number of at least 8 micro-batches (2 x pp), not 6"));
  job = pipeline_job(4, 1, 8);
  job.schedule.pp_schedule = PpSchedule::kDualPipe;
  job.schedule.dp_reduce = DpReduce::kEveryMicroBatch;
  EXPECT_TRUE(Has(error_of([&] { job.resolve(4); }), "reduces gradients once"));
}

}  // namespace
}  // namespace shoal::work
