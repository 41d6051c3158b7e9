// Data parallelism in the training generator (docs/training.md, "DP"): when
// gradients are reduced (the last micro-batch or every one), in what dtype,
// in which buckets, and the gradient-norm barrier before the step; exact
// bytes and the dependencies each coflow waits on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_checks.hpp"
#include "training_cases.hpp"

namespace shoal::work {
namespace {

using namespace test_jobs;
using Bucket = ScheduleSpec::Bucket;

/// The small MoE job (TP 2, PP 2, EP 4, DP 16 on 64 GPUs; 3 micro-batches)
/// with a bucket per layer reduced in `dtype` bytes, no barrier.
JobSpec per_layer(std::uint64_t dtype = 2) {
  JobSpec job = small_moe();
  job.schedule.dp_bucket = Bucket::kLayer;
  job.schedule.grad_reduce_dtype_bytes = dtype;
  job.schedule.grad_norm_barrier = false;
  return job;
}

/// Whether a node's name is micro-batch `mb`'s backward of `layer` (from 1):
/// a task "…B<mb>.L<layer>.…" or its TP all-reduce "…m<mb>.L<layer>.b.tp…".
bool backward_of(std::string_view name, std::uint32_t mb, std::uint32_t layer) {
  const std::string l = ".L" + std::to_string(layer) + ".";
  return name.find(".B" + std::to_string(mb) + l) != std::string::npos ||
         name.find(".m" + std::to_string(mb) + l + "b.tp") != std::string::npos;
}

JobTraffic traffic_of(JobSpec job) {
  const Dag dag = generate(job, 64);
  return job_traffic(job, dag, 8);
}

/// The reduce-scatters of stage `stage` by their name's layer tag ("L3"), in creation order.
std::vector<const Coflow*> reduce_scatters(const Dag& dag, std::uint32_t stage, bool experts) {
  std::vector<const Coflow*> out;
  for (const Coflow& c : dag.coflows()) {
    if (c.labels.type != CoflowType::kDp || !c.name.ends_with(".rs")) continue;
    if (c.labels.stage != stage || (c.name.find(".dpe") != std::string::npos) != experts) continue;
    out.push_back(&c);
  }
  return out;
}

// DeepSpeed ZeRO-2 with gradient accumulation reduces every micro-batch's
// gradients: three reduce-scatters for each one of Megatron's, the same bytes
// each; the parameters are gathered once, after the step.
TEST(TrainingDp, EveryMicroBatchMultipliesReduceScatterBytesByTheMicroBatches) {
  JobSpec last = per_layer();
  JobSpec every = per_layer();
  every.schedule.dp_reduce = DpReduce::kEveryMicroBatch;
  const JobTraffic a = traffic_of(last);
  const JobTraffic b = traffic_of(every);
  ASSERT_GT(a.dp_reduce_dense_per_gpu, 0);
  ASSERT_GT(a.dp_reduce_expert_per_gpu, 0);
  EXPECT_EQ(b.dp_reduce_dense_per_gpu, 3 * a.dp_reduce_dense_per_gpu);
  EXPECT_EQ(b.dp_reduce_expert_per_gpu, 3 * a.dp_reduce_expert_per_gpu);
  EXPECT_EQ(b.dp_reductions, 3 * a.dp_reductions);
  EXPECT_EQ(b.dp_gather_dense_per_gpu, a.dp_gather_dense_per_gpu);
  EXPECT_EQ(b.dp_gather_expert_per_gpu, a.dp_gather_expert_per_gpu);
  // Each micro-batch's reduce-scatter carries its micro-batch and waits for that
  // micro-batch's backward of the layer (its TP all-reduce, with TP 2).
  JobSpec job = every;
  const Dag dag = generate(job, 64);
  const auto found = dag.find("j0.i0.L4.m1.dpd0.rs");
  ASSERT_TRUE(found.has_value());
  const Coflow& rs = dag.coflows()[found->index];
  EXPECT_EQ(rs.labels.micro_batch, 1u);
  ASSERT_FALSE(rs.after.empty());
  for (const NodeRef dep : rs.after) EXPECT_TRUE(backward_of(dag.name(dep), 1, 4)) << dag.name(dep);
}

// Megatron-LM trains bf16 models with gradients reduced in fp32: twice the
// reduce-scatter bytes; the all-gather brings bf16 parameters back.
TEST(TrainingDp, Fp32ReductionDoublesReduceScatterBytes) {
  const JobTraffic bf16 = traffic_of(per_layer(2));
  const JobTraffic fp32 = traffic_of(per_layer(4));
  // Per layer, S x 15/16 (dense, 16 members) and S x 3/4 (experts, 4 members)
  // with S a multiple of 16 here: doubling S doubles each flow exactly.
  EXPECT_EQ(fp32.dp_reduce_dense_per_gpu, 2 * bf16.dp_reduce_dense_per_gpu);
  EXPECT_EQ(fp32.dp_reduce_expert_per_gpu, 2 * bf16.dp_reduce_expert_per_gpu);
  EXPECT_EQ(fp32.dp_gather_dense_per_gpu, bf16.dp_gather_dense_per_gpu);
  EXPECT_EQ(fp32.dp_gather_expert_per_gpu, bf16.dp_gather_expert_per_gpu);
}

// Buckets take whole layers in backward order and close once they hold the
// limit. Dense parameters per TP rank: layer 1 (the dense one, with the
// embedding) 5,754,880, layers 2 and 3 2,891,776 each, layer 4 (with the head)
// 3,403,776; experts per GPU 4 x 3 x 1024 x 512 = 6,291,456 per MoE layer.
TEST(TrainingDp, BucketsTakeWholeLayersInBackwardOrder) {
  struct Case {
    const char* name;
    Bucket bucket;
    std::uint64_t parameters;
    std::vector<std::string> stage0, stage1;  // dense buckets, named by their last layer
    std::size_t expert_buckets;               // over both stages
  };
  const Case cases[] = {
      // Stage 1: L4 (3.40 M) + L3 = 6.30 M >= 6 M; stage 0: L2 + L1 = 8.65 M.
      {"6 M parameters", Bucket::kParameters, 6'000'000, {"L1"}, {"L3"}, 3},
      // Stage 1: L4 alone holds 3 M, then L3; stage 0: L2 (2.89 M) + L1.
      {"3 M parameters", Bucket::kParameters, 3'000'000, {"L1"}, {"L4", "L3"}, 3},
      {"a bucket per layer", Bucket::kLayer, 0, {"L2", "L1"}, {"L4", "L3"}, 3},
      // Megatron: max(40 M, 1 M x 16) on stage 0, one per buffer on stage 1.
      {"megatron", Bucket::kMegatron, 0, {"L1"}, {"L3"}, 2},
      {"deepspeed", Bucket::kDeepSpeed, 0, {"L1"}, {"L3"}, 2},
      {"buffer", Bucket::kBuffer, 0, {"L1"}, {"L3"}, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    JobSpec job = per_layer(4);
    job.schedule.dp_bucket = c.bucket;
    job.schedule.dp_bucket_parameters = c.parameters;
    const Dag dag = generate(job, 64);
    for (std::uint32_t stage = 0; stage < 2; ++stage) {
      const std::vector<std::string>& want = stage == 0 ? c.stage0 : c.stage1;
      std::vector<std::string> got;
      for (const Coflow* rs : reduce_scatters(dag, stage, false)) {
        if (rs->name.find(".dpd0.") == std::string::npos) continue;  // TP rank 0's group
        got.push_back("L" + std::to_string(rs->labels.layer));
        EXPECT_NE(rs->name.find("." + got.back() + "."), std::string::npos) << rs->name;
      }
      // Created lowest layer first.
      EXPECT_EQ(got, std::vector<std::string>(want.rbegin(), want.rend())) << "stage " << stage;
    }
    // Expert buckets of TP rank 0, EP rank 0.
    std::size_t experts = 0;
    for (std::uint32_t stage = 0; stage < 2; ++stage) {
      for (const Coflow* rs : reduce_scatters(dag, stage, true)) {
        experts += rs->name.find(".dpe0.0.") != std::string::npos;
      }
    }
    EXPECT_EQ(experts, c.expert_buckets);
  }
  // The 6 M bucket on stage 1 holds layers 3 and 4: per GPU (16 - 1)/16 of their
  // 6,295,552 dense parameters in fp32; it waits on the backward of layer 3 (its
  // last), and the next iteration's forward of both layers waits on its all-gather.
  JobSpec job = per_layer(4);
  job.schedule.dp_bucket = Bucket::kParameters;
  job.schedule.dp_bucket_parameters = 6'000'000;
  job.parallel.iterations = 2;
  const Dag dag = generate(job, 64);
  const Coflow& rs = dag.coflows()[dag.find("j0.i0.L3.dpd0.rs")->index];
  EXPECT_EQ(dag.flows_of(rs).front().bytes, (2'891'776 + 3'403'776) * 4 * 15 / 16);
  for (const NodeRef dep : rs.after) EXPECT_TRUE(backward_of(dag.name(dep), 2, 3)) << dag.name(dep);
  const Coflow& ag = dag.coflows()[dag.find("j0.i0.L3.dpd0.ag")->index];
  EXPECT_EQ(dag.flows_of(ag).front().bytes, (2'891'776 + 3'403'776) * 2 * 15 / 16);
  for (const char* layer : {".L3.", ".L4."}) {
    bool waits = false;
    for (const ComputeTask& t : dag.tasks()) {
      if (t.name.rfind("j0.i1.", 0) != 0 || t.name.find(".F0") == std::string::npos ||
          t.name.find(layer) == std::string::npos || !t.name.ends_with(".a")) {
        continue;
      }
      for (const NodeRef dep : t.after) waits = waits || dag.name(dep) == ag.name;
    }
    EXPECT_TRUE(waits) << layer;
  }
}

// The gradient norm is all-reduced over every GPU of the job before any of them
// steps (Megatron's clip_grad_norm_fp32 with the distributed optimizer). On the
// tiny dense job's two stages, stage 1 finishes its backwards first; without the
// barrier it steps at once, with it only after stage 0's last backward.
TEST(TrainingDp, TheGradientNormBarrierHoldsEveryStepForTheLastBackward) {
  JobSpec job = small_moe();
  job.schedule.grad_norm_barrier = true;
  const Dag dag = generate(job, 64);
  const auto barrier = dag.find("j0.i0.gradnorm");
  ASSERT_TRUE(barrier.has_value());
  const Coflow& norm = dag.coflows()[barrier->index];
  EXPECT_EQ(norm.labels.type, CoflowType::kOther);
  EXPECT_EQ(norm.flow_count, 64u);  // a ring over the job's GPUs
  std::size_t steps = 0;
  for (const ComputeTask& t : dag.tasks()) {
    if (t.labels.kind != TaskKind::kOptimizer) continue;
    ++steps;
    bool waits = false;
    for (const NodeRef dep : t.after) waits = waits || dag.name(dep) == norm.name;
    EXPECT_TRUE(waits) << t.name;
  }
  EXPECT_EQ(steps, 64u);

  const topo::Fabric fabric = two_gpu_fabric(400'000'000'000, kMicrosecond);
  auto steps_and_last_backward = [&](bool barrier_on) {
    JobSpec dense = tiny_dense(4);
    dense.schedule.grad_norm_barrier = barrier_on;
    const Dag d = generate(dense, 2);
    const exec::RunResults r = simulate(fabric, d);
    Time first_step = kTimeInfinity, last_backward = 0;
    for (std::uint32_t t = 0; t < d.tasks().size(); ++t) {
      if (d.tasks()[t].labels.kind == TaskKind::kOptimizer) {
        first_step = std::min(first_step, r.task_start[t]);
      } else if (d.tasks()[t].labels.kind == TaskKind::kBackward) {
        last_backward = std::max(last_backward, r.task_end[t]);
      }
    }
    return std::pair{first_step, last_backward};
  };
  const auto [free_step, free_backward] = steps_and_last_backward(false);
  EXPECT_LT(free_step, free_backward) << "stage 1 steps while stage 0 is in its cool-down";
  const auto [held_step, held_backward] = steps_and_last_backward(true);
  // Stage 1's share of the norm (8 bytes) may hold stage 0's last gradient cell
  // by its serialization on the link into GPU 0, no more.
  EXPECT_GE(held_backward, free_backward);
  EXPECT_LE(held_backward - free_backward, transmit_time(8, 400'000'000'000));
  EXPECT_GT(held_step, held_backward) << "no GPU steps before the last backward is done";
}

}  // namespace
}  // namespace shoal::work
