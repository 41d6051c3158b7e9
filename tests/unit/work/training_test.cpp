// The training generator: traffic formulas exactly, the 1F1B critical path
// without a network, skew, bad factoring, and the PipeMorph effect of a slow
// PP link (docs/training.md).
#include <gtest/gtest.h>

#include <string>

#include "error_checks.hpp"
#include "one_rank_run.hpp"
#include "shoal/core/comm.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/net/network.hpp"
#include "shoal/topo/builders.hpp"
#include "shoal/topo/fabric_config.hpp"
#include "shoal/work/training_dag.hpp"
#include "training_cases.hpp"

namespace shoal::work {
namespace {

using namespace test_jobs;
using test::error_of;
using test::Has;

TEST(TrainingTraffic, FormulasExactly) {
  JobSpec job = small_moe();
  // A bucket per layer, reduced in the model's dtype (2 bytes): the per-layer
  // formulas below (training_dp_test.cpp has the buckets, fp32 and the rest).
  job.schedule.dp_bucket = ScheduleSpec::Bucket::kLayer;
  job.schedule.grad_reduce_dtype_bytes = 2;
  const Dag dag = generate(job, 64);  // TP 2 x PP 2 x DP 16, EP 4 inside DP, expert DP 4
  ASSERT_EQ(job.parallel.dp, 16u);
  const JobTraffic t = job_traffic(job, dag, 8);
  // EP, uniform routing: tokens/TP x top_k x hidden x bytes x (EP-1)/EP per dispatch.
  EXPECT_EQ(t.ep_dispatch_per_gpu, 256 * 2 * 1024 * 2 * 3 / 4);
  EXPECT_EQ(ep_pair_bytes(job), 256 * 2 * 1024 * 2 / 4);
  // Per GPU per iteration: 4 all-to-alls in each of 3 MoE layers (of 4; 2 per
  // stage, stage 0 has the dense one) x 3 micro-batches: (2 + 1) / 2 MoE layers per stage on
  // average.
  const auto ep_index = static_cast<std::size_t>(CoflowType::kEp);
  EXPECT_EQ(t.network[ep_index] + t.nvlink[ep_index], t.ep_dispatch_per_gpu * 4 * 3 * 3 / 2);
  // PP: tokens x hidden x bytes / TP per send; each stage sends 3 (forward or backward).
  EXPECT_EQ(t.pp_per_send, 512 * 1024 * 2 / 2);
  const auto pp_index = static_cast<std::size_t>(CoflowType::kPp);
  EXPECT_EQ(t.network[pp_index] + t.nvlink[pp_index], t.pp_per_send * 3);
  // TP: two ring all-reduces of tokens x hidden x bytes per layer and pass:
  // 2 x 2 (TP-1)/TP x S; 2 layers x 2 passes x 3 micro-batches per GPU.
  EXPECT_EQ(t.tp_per_layer_pass, 2 * 2 * 1 * (512 * 1024 * 2) / 2);
  const auto tp_index = static_cast<std::size_t>(CoflowType::kTp);
  EXPECT_EQ(t.network[tp_index] + t.nvlink[tp_index], t.tp_per_layer_pass * 2 * 2 * 3);
  // DP, ring reduce-scatter: (N-1)/N x S per GPU. Dense parameters of a layer
  // per TP rank: attention 4 h^2 (+ shared experts 3 h 512 + router h x 16 in MoE
  // layers, or the dense FFN 3 h 2048), embedding and head h x vocab on the
  // first and last layer, halved by TP; N = 16.
  const std::uint64_t h = 1024;
  const std::uint64_t attention = 4 * h * h, shared = 3 * h * 512 + h * 16, dense = 3 * h * 2048;
  const std::uint64_t stage0 =
      (attention + dense + h * 1000) / 2 * 2 + (attention + shared) / 2 * 2;
  const std::uint64_t stage1 =
      (attention + shared) / 2 * 2 + (attention + shared + h * 1000) / 2 * 2;
  EXPECT_EQ(t.dp_reduce_dense_per_gpu,
            static_cast<Bytes>((stage0 * 15 / 16 + stage1 * 15 / 16) / 2));
  // The all-gather brings the parameters back, in the same dtype here: the same bytes.
  EXPECT_EQ(t.dp_gather_dense_per_gpu, t.dp_reduce_dense_per_gpu);
  // Experts: 16 / EP = 4 experts of 3 x h x 512 per GPU and MoE layer, over
  // the expert-DP group of 4: 3/4 of it; 1 MoE layer on stage 0, 2 on stage 1.
  const std::uint64_t experts = 4 * 3 * h * 512 * 2;
  EXPECT_EQ(t.dp_reduce_expert_per_gpu,
            static_cast<Bytes>((experts * 3 / 4 * 1 + experts * 3 / 4 * 2) / 2));
  EXPECT_EQ(t.dp_gather_expert_per_gpu, t.dp_reduce_expert_per_gpu);
}

TEST(TrainingTraffic, SkewMovesBytesToTheHotMember) {
  JobSpec job = small_moe();
  job.skew.hot_ratio = 2.5;
  job.resolve(64);
  const std::vector<double> w = ep_weights(job);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_DOUBLE_EQ(w[0], 2.5);
  EXPECT_DOUBLE_EQ(w[1], 0.5);
  EXPECT_DOUBLE_EQ(w[0] + w[1] + w[2] + w[3], 4.0);
  job.skew = SkewSpec{};  // Zipf: 1, 1/2, 1/3, 1/4 scaled to mean 1
  job.skew.zipf = 1.0;
  const std::vector<double> z = ep_weights(job);
  EXPECT_NEAR(z[0] / z[3], 4.0, 1e-12);
  EXPECT_NEAR(z[0] + z[1] + z[2] + z[3], 4.0, 1e-12);
}

TEST(TrainingJob, BadFactoringIsOneClearError) {
  JobSpec job = small_moe();
  job.parallel.dp = 8;
  job.parallel.gpus = 64;
  EXPECT_TRUE(Has(error_of([&] { job.resolve(64); }),
                  "job small-moe: tp x pp x dp = 2 x 2 x 8 = 32 GPUs, but the job has 64"));
  job = small_moe();
  job.parallel.ep = 3;
  EXPECT_TRUE(Has(error_of([&] { job.resolve(64); }), "parallelism.ep (3) must divide dp (16)"));
  job = small_moe();
  job.parallel.pp = 3;
  EXPECT_TRUE(Has(error_of([&] { job.resolve(60); }),
                  "model.layers (4) must divide by pp x virtual_stages (3)"));
  job = small_moe();
  EXPECT_TRUE(
      Has(error_of([&] { job.resolve(62); }), "62 GPUs do not factor as tp (2) x pp (2) x dp"));
}

/// The tiny dense job on two stages, 8 micro-batches, 4 layers, 400 Gb/s and
/// 1 us links; iteration() puts extra latency on stage 0's uplink, which
/// carries only its forward sends (the gradient-norm barrier, whose
/// all-reduce would cross it too, is off: the pipeline's slack alone).
struct SlowLinkCase {
  explicit SlowLinkCase(std::uint32_t extra_warmup)
      : fabric(two_gpu_fabric(400'000'000'000, kMicrosecond)) {
    JobSpec job = tiny_dense(8);
    job.model.layers = 4;
    job.parallel.extra_warmup = extra_warmup;
    job.schedule.grad_norm_barrier = false;
    dag = generate(job, 2);
  }
  double iteration(Time delay) const {
    return static_cast<double>(
        last_task_end(simulate(fabric, dag, fabric.nic_links(0).front(), delay)));
  }
  topo::Fabric fabric;
  Dag dag;
};

// Without a network (1 Pb/s, 1 ns links) the iteration is the 1F1B critical
// path. Per micro-batch, forward: attention 512 x (2 x 4h^2 + 4 x 512 x h) =
// 5,368,709,120 FLOP = 53.687 us; FFN 512 x 2 x 2 x h x 4096 = 8,589,934,592 FLOP
// = 85.899 us; the head 512 x 2 x h x 1000 = 1,048,576,000 FLOP = 10.486 us on
// stage 1. So f0 = 139.586 us, f1 = 150.072 us, b = 2f. With 2 micro-batches:
// stage 0 F0 F1 . B0 B1, stage 1 F0 B0 F1 B1; stage 1's B1 ends at f0 + 2 f1 +
// 2 b1 = f0 + 6 f1, then stage 0's B1: 3 f0 + 6 f1 = 1,319.19 us.
TEST(TrainingSchedule, NoNetworkIterationIsTheOneFOneBCriticalPath) {
  const topo::Fabric fabric = two_gpu_fabric(1'000'000'000'000'000, kNanosecond);
  JobSpec job = tiny_dense(2);
  const Dag dag = generate(job, 2);
  EXPECT_NEAR(static_cast<double>(last_task_end(simulate(fabric, dag))) / 1e6, 1319.19, 0.2);
}

// PipeMorph (digest 003): a delay on a PP link is absorbed at a fixed cost
// until it exceeds the schedule's slack, then bubbles cascade. Two stages, 8
// micro-batches, 4 layers (f = 279 us per stage and micro-batch, b = 2f); the
// delay is on stage 0's uplink, which carries only its forward sends. In
// Shoal's 1F1B with equal stages the forward send has no slack in the steady
// state, so below about one operation each unit of delay costs M/2 = 4 (every
// other micro-batch's activation lies on the critical path); past it the
// cost per unit grows (measured: 4 up to about 420 us, then 6 to 15).
TEST(TrainingSchedule, SlowPipelineLinkCostsAFixedMultipleThenCascades) {
  const SlowLinkCase plain(0);
  auto iteration = [&](Time d) { return plain.iteration(d); };
  const double base = iteration(0);
  const double small = (iteration(200 * kMicrosecond) - base) / (200 * kMicrosecond);
  const double large =
      (iteration(800 * kMicrosecond) - iteration(600 * kMicrosecond)) / (200 * kMicrosecond);
  EXPECT_NEAR(small, 4.0, 0.05) << "below the slack: each unit of delay costs M/2";
  EXPECT_GT(large, 2 * small) << "past it, bubbles cascade";
}

}  // namespace
}  // namespace shoal::work

namespace shoal::work {
namespace {

using namespace test_jobs;

// Hierarchical DP: the small MoE job's dense DP group of a TP rank (16 GPUs,
// every other GPU: 4 per 8-GPU server, 4 servers) reduce-scatters inside each
// server, (k-1)/k x S = 3/4 S per GPU over NVLink, then across servers,
// (n-1)/n x S/k = 3/16 S per GPU over the network; the all-gather mirrors it.
TEST(TrainingTraffic, HierarchicalDataParallelSplitsNvlinkAndNetwork) {
  JobSpec ring = small_moe();
  const Dag ring_dag = generate(ring, 64);
  JobSpec job = small_moe();
  job.parallel.dp_algorithm = "hierarchical";
  const Dag dag = generate(job, 64);
  const JobTraffic t = job_traffic(job, dag, 8);
  const JobTraffic r = job_traffic(ring, ring_dag, 8);
  const auto dp = static_cast<std::size_t>(CoflowType::kDp);
  // Per GPU S summed over its stage's layers, from the ring's (N-1)/N x S with N = 16
  // (dense) and the expert groups' 3/4 x S with N = 4 (a group of 4 members, one per server).
  const double dense_s = static_cast<double>(r.dp_reduce_dense_per_gpu) * 16 / 15;
  // Dense: both hierarchical steps; experts: the expert-DP group has one member per
  // server, so it stays a plain ring.
  const double expected_rs =
      dense_s * 3 / 4 + dense_s * 3 / 16 + static_cast<double>(r.dp_reduce_expert_per_gpu);
  EXPECT_NEAR(static_cast<double>(t.dp_reduce_dense_per_gpu + t.dp_reduce_expert_per_gpu),
              expected_rs, expected_rs * 1e-4);
  // Hierarchical moves most dense DP bytes onto NVLink: RS and AG inside servers.
  EXPECT_GT(t.nvlink[dp], r.nvlink[dp]);
  EXPECT_TRUE(Has(error_of([&] {
                    JobSpec bad = small_moe();
                    bad.parallel.dp_algorithm = "tree";
                    bad.resolve(64);
                  }),
                  "parallelism.dp_algorithm \"tree\" is unknown (ring or hierarchical)"));
}

}  // namespace
}  // namespace shoal::work

namespace shoal::work {
namespace {

using namespace test_jobs;

// Node-limited routing: an EP group of 16 on two 8-GPU servers. Without a limit
// each GPU sends base = 512 x 2 x 1024 x 2 / 16 = 131,072 B to each of the 8
// members on the other server per dispatch: 1,048,576 B over the network. With
// at most M = 1 of the N = 2 servers per token, a token crosses once, with
// probability 1/2: 512 x 1024 x 2 x 1/2 = 524,288 B; the other server's member
// of the same local index forwards it over NVLink.
TEST(TrainingTraffic, NodeLimitedRoutingCrossesOncePerServer) {
  auto job = [](std::uint32_t limit) {
    JobSpec j = small_moe();
    j.parallel.tp = 1;
    j.parallel.pp = 1;
    j.parallel.ep = 16;
    j.model.experts = 16;
    j.model.node_limit = limit;
    return j;
  };
  const auto ep = static_cast<std::size_t>(CoflowType::kEp);
  const std::uint64_t per_iteration = 4 * 3 * 3;  // 4 all-to-alls x 3 MoE layers x 3 micro-batches
  JobSpec free = job(0);
  const Dag free_dag = generate(free, 16);
  EXPECT_EQ(job_traffic(free, free_dag, 8).network[ep], 1'048'576 * per_iteration);
  JobSpec limited = job(1);
  const Dag limited_dag = generate(limited, 16);
  const JobTraffic t = job_traffic(limited, limited_dag, 8);
  EXPECT_EQ(t.network[ep], 524'288 * per_iteration);
  // Every expert still receives its share: 7 local peers plus 8 forwarded shares.
  EXPECT_EQ(t.nvlink[ep], (7 + 8) * 131'072 * per_iteration - 131'072 * per_iteration);
  JobSpec no_effect = job(2);  // M >= N: no limit
  const Dag same = generate(no_effect, 16);
  EXPECT_EQ(job_traffic(no_effect, same, 8).network[ep], 1'048'576 * per_iteration);
}

}  // namespace
}  // namespace shoal::work

namespace shoal::work {
namespace {

using namespace test_jobs;

// Measured layer times replace the FLOP-based ones: 100 us per layer forward
// (the LM head stays FLOP-based, 10.486 us): f0 = 100 us, f1 = 110.486 us, and
// the 2-stage, 2-micro-batch critical path 3 f0 + 6 f1 = 962.916 us.
TEST(TrainingSchedule, MeasuredLayerTimesReplaceFlops) {
  const topo::Fabric fabric = two_gpu_fabric(1'000'000'000'000'000, kNanosecond);
  JobSpec job = tiny_dense(2);
  job.gpu.layer_forward = {100 * kMicrosecond, 100 * kMicrosecond};
  const Dag dag = generate(job, 2);
  EXPECT_NEAR(static_cast<double>(last_task_end(simulate(fabric, dag))) / 1e6, 962.916, 0.2);
  JobSpec bad = tiny_dense(2);
  bad.gpu.layer_forward = {100 * kMicrosecond};
  EXPECT_TRUE(Has(error_of([&] { bad.resolve(2); }),
                  "gpu.layer_forward has 1 times; the model has 2 layers"));
}

}  // namespace
}  // namespace shoal::work

namespace shoal::work {
namespace {

using namespace test_jobs;

// With PipeMorph's remedy, one extra warm-up forward on stage 0, the forward
// send has one operation of slack (f = 279 us): a delay below it adds exactly
// itself to the iteration (100 and 200 us), past it bubbles cascade (measured:
// 300 us costs 636 us, 800 us costs 7.7 ms).
TEST(TrainingSchedule, SlowPipelineLinkWithSlackAddsAboutItself) {
  const SlowLinkCase slack(1);
  auto iteration = [&](Time d) { return slack.iteration(d); };
  const double base = iteration(0);
  EXPECT_NEAR(iteration(100 * kMicrosecond) - base, 100e6, 1e6) << "below the slack: about d";
  EXPECT_NEAR(iteration(200 * kMicrosecond) - base, 200e6, 1e6) << "below the slack: about d";
  const double past = (iteration(800 * kMicrosecond) - iteration(500 * kMicrosecond)) / 300e6;
  EXPECT_GT(past, 2.0) << "past the slack, each unit of delay costs more than 2";
}

}  // namespace
}  // namespace shoal::work

namespace shoal::work {
namespace {

using namespace test_jobs;

// The placement order moves groups onto servers: tp-ep-dp-pp puts the two
// pipeline stages 32 GPUs apart (PP crosses the network); tp-pp-ep-dp puts each
// stage pair 2 GPUs apart, inside one 8-GPU server (PP over NVLink only).
TEST(TrainingJob, PlacementOrderDecidesWhereGroupsSit) {
  const auto pp = static_cast<std::size_t>(CoflowType::kPp);
  JobSpec megatron = small_moe();
  const Dag a = generate(megatron, 64);
  const JobTraffic ta = job_traffic(megatron, a, 8);
  EXPECT_GT(ta.network[pp], 0);
  EXPECT_EQ(ta.nvlink[pp], 0);
  JobSpec stages_inside = small_moe();
  stages_inside.parallel.order = "tp-pp-ep-dp";
  const Dag b = generate(stages_inside, 64);
  const JobTraffic tb = job_traffic(stages_inside, b, 8);
  EXPECT_EQ(tb.network[pp], 0);
  EXPECT_EQ(tb.nvlink[pp], ta.network[pp]);
  JobSpec bad = small_moe();
  bad.parallel.order = "tp-ep-pp";
  EXPECT_TRUE(Has(error_of([&] { bad.resolve(64); }),
                  "parallelism.order \"tp-ep-pp\" must name tp, ep, dp and pp once each"));
}

}  // namespace
}  // namespace shoal::work
