// Compute-communication overlap of the EP all-to-all (docs/training.md,
// "Overlap"): two-batch overlap cuts the exposed communication by what the
// hand calculation below predicts and leaves every GPU's compute alone
// (apart from comm_sms, exactly by its formula); chunking conserves every
// flow's bytes to the byte in K coflows per all-to-all; bad combinations are
// one error naming the key.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "error_checks.hpp"
#include "training_cases.hpp"

namespace shoal::work {
namespace {

using test::error_of;
using test::Has;
using test_jobs::generate;

/// One MoE layer (8 experts, top-2, no shared expert, no LM head) on 64 GPUs:
/// TP 1, PP 1, EP 8, DP 64, two micro-batches of 64 tokens, 100 TFLOP/s.
JobSpec one_layer_moe(Overlap overlap) {
  JobSpec j;
  j.file = "one-layer-moe";
  ModelSpec& m = j.model;
  m.name = "one MoE layer";
  m.layers = 1;
  m.hidden = 1024;
  m.heads = 8;
  m.sequence = 64;
  m.experts = 8;
  m.top_k = 2;
  m.expert_ffn = 512;
  j.parallel.ep = 8;
  j.parallel.micro_batches = 2;
  j.parallel.micro_batch_tokens = 64;
  j.gpu.peak_tflops = 100;
  j.gpu.efficiency = 1.0;
  j.schedule.grad_norm_barrier = false;
  j.schedule.dp_bucket = ScheduleSpec::Bucket::kLayer;
  j.overlap.mode = overlap;
  return j;
}

/// 64 GPUs, each its own server, on one switch of 1 Pb/s links with 10 us of
/// latency each: an all-to-all of this job's 32 KiB flows takes C = 4 x 10 us
/// (its last byte two links away, its acknowledgement two links back) and a
/// few nanoseconds of serialization, far longer than any compute task: the
/// network is slow, and only by latency, so two all-to-alls side by side take
/// as long as one.
constexpr Time kLatency = 10'000'000;  // 10 us in ps
topo::Fabric latency_fabric() {
  topo::FabricSpec spec;
  spec.gpus = 64;
  spec.gpus_per_server = 1;
  spec.link_rate = 1e15;
  spec.link_latency = kLatency;
  return topo::build_single_switch(spec);
}

struct Outcome {
  Dag dag;
  exec::RunResults results;
};

Outcome run(JobSpec job) {
  Outcome o{generate(job, 64), {}};
  o.results = test_jobs::simulate(latency_fabric(), o.dag);
  return o;
}

Time compute_of(const Dag& dag, GpuId g) {
  Time t = 0;
  for (const ComputeTask& task : dag.tasks()) t += task.gpu == g ? task.duration : 0;
  return t;
}

// The hand calculation, with a the attention and f the experts' forward of one
// micro-batch (backward 2a and 2f), C one all-to-all, C >= 2 max(a, f):
//
// none, micro-batch after micro-batch, each a, C, f, C forward and C, 2f, C,
// 2a backward: 2 (3a + 3f + 4C); the GPU idles through all 8 all-to-alls.
//
// dual-micro-batch, A and B side by side (the GPU takes ready tasks in turn):
//   forward   A.a [0, a]; B.a [a, 2a]; A's dispatch [a, a + C]; B's [2a, 2a + C];
//             A.f at a + C; B.f when both its dispatch and A.f are done, at
//             a + C + l with l = max(a, f); A's combine ends a + 2C + f, B's
//             at a + 2C + l + f: the pair's forward takes a + f + 2C + l.
//   backward  both dispatches at once, [0, C]; A.2f [C, C + 2f]; B.2f right
//             after it; A's combine [C + 2f, 2C + 2f], then A.2a; B's combine
//             ends at 2C + 4f <= A.2a's end only if f <= a, so B.2a starts at
//             2C + 2f + 2l: the backward takes 2a + 2f + 2C + 2l.
// The passes: 3a + 3f + 4C + 3l, against 6a + 6f + 8C: overlap hides
// 3a + 3f + 4C - 3l of exposed communication (4C + 3f here, a > f), and
// the compute is the same.
TEST(Overlap, DualMicroBatchHidesWhatTheHandCalculationSays) {
  JobSpec probe = one_layer_moe(Overlap::kNone);
  const Time a = attention_time(probe, 0), f = ffn_time(probe, 0), l = std::max(a, f);
  const Outcome none = run(one_layer_moe(Overlap::kNone));
  const Outcome dual = run(one_layer_moe(Overlap::kDualMicroBatch));
  // C as measured without overlap: from the end of micro-batch 0's attention
  // to the start of its experts, the dispatch alone. 4 x 10 us and the
  // serialization at 1 Pb/s (a few ns).
  const auto at = [&](const Outcome& o, const std::string& name) {
    return o.dag.find(name)->index;
  };
  const Time c = none.results.task_start[at(none, "j0.i0.g0.F0.L1.f")] -
                 none.results.task_end[at(none, "j0.i0.g0.F0.L1.a")];
  EXPECT_GE(c, 4 * kLatency);
  EXPECT_LE(c, 4 * kLatency + 5'000);
  ASSERT_GE(c, 2 * l);  // the all-to-all dominates: the closed form's condition
  const Time saved = 3 * a + 3 * f + 4 * c - 3 * l;
  for (GpuId g = 0; g < 64; ++g) {
    SCOPED_TRACE("GPU " + std::to_string(g));
    EXPECT_EQ(none.results.gpu_busy[g], 2 * (3 * a + 3 * f));
    EXPECT_EQ(dual.results.gpu_busy[g], none.results.gpu_busy[g]);  // not double-counted
    EXPECT_EQ(compute_of(dual.dag, g), compute_of(none.dag, g));
    // Exposed before the step: the end of the GPU's last pass less its compute
    // (the data-parallel tail after it depends on when each bucket's
    // gradients were ready, not on the overlap).
    auto exposed = [&](const Outcome& o) {
      Time end = 0;
      for (std::size_t t = 0; t < o.dag.tasks().size(); ++t) {
        const ComputeTask& task = o.dag.tasks()[t];
        if (task.gpu == g && task.labels.kind != TaskKind::kOptimizer) {
          end = std::max(end, o.results.task_end[t]);
        }
      }
      return end - o.results.gpu_busy[g];
    };
    // Each GPU's all-to-alls differ from C by the order in which the switch
    // serializes the cells: up to a few nanoseconds.
    constexpr double kSlack = 5'000;  // 5 ns
    EXPECT_NEAR(static_cast<double>(exposed(none)), static_cast<double>(8 * c), kSlack);
    EXPECT_NEAR(static_cast<double>(exposed(none) - exposed(dual)), static_cast<double>(saved),
                kSlack);
  }
  // The same coflows and bytes: overlap only changes who waits for whom.
  EXPECT_EQ(dual.dag.coflows().size(), none.dag.coflows().size());
  EXPECT_EQ(dual.dag.total_bytes(), none.dag.total_bytes());
  EXPECT_EQ(dual.dag.tasks().size(), none.dag.tasks().size());
}

// comm_sms: every compute task of a pair takes gpu_sms / (gpu_sms - comm_sms)
// as long (DeepSeek-V3: 20 of an H800's 132 SMs), rounded to the picosecond.
TEST(Overlap, CommSmsSlowsOverlappedComputeByTheirShare) {
  JobSpec none = one_layer_moe(Overlap::kNone);
  JobSpec slowed = one_layer_moe(Overlap::kDualMicroBatch);
  none.overlap.comm_sms = 20;  // nothing overlaps: no effect
  slowed.overlap.comm_sms = 20;
  const Dag plain = generate(none, 64);
  const Dag dag = generate(slowed, 64);
  ASSERT_EQ(plain.tasks().size(), dag.tasks().size());
  std::map<std::string, Time, std::less<>> by_name;
  for (const ComputeTask& t : plain.tasks()) by_name[std::string(t.name)] = t.duration;
  for (const ComputeTask& t : dag.tasks()) {
    const Time d = by_name.find(t.name)->second;
    EXPECT_EQ(t.duration, t.labels.kind == TaskKind::kOptimizer
                              ? d
                              : static_cast<Time>(std::llround(static_cast<double>(d) * 132 / 112)))
        << t.name;
  }
}

/// Flows of the EP coflows by (coflow name less its chunk, source, destination).
std::map<std::tuple<std::string, GpuId, GpuId>, Bytes> ep_bytes(const Dag& dag, int& coflows) {
  std::map<std::tuple<std::string, GpuId, GpuId>, Bytes> out;
  coflows = 0;
  for (const Coflow& c : dag.coflows()) {
    if (c.labels.type != CoflowType::kEp) continue;
    ++coflows;
    std::string key(c.name);
    if (const auto chunk = key.rfind(".c");
        chunk != std::string::npos && chunk > key.rfind(".ep")) {
      key.erase(chunk, key.rfind('.') - chunk);
    }
    for (const Flow& f : dag.flows_of(c)) out[{key, f.src, f.dst}] += f.bytes;
  }
  return out;
}

TEST(Overlap, ChunkedConservesEveryFlowsBytesInKCoflows) {
  for (const EpDedup dedup : {EpDedup::kPerExpert, EpDedup::kPerNode}) {
    JobSpec plain = test_jobs::small_moe();
    plain.ep_comm.dedup = dedup;
    plain.skew.hot_ratio = 2.5;  // flows of unequal bytes, not multiples of K
    JobSpec chunked = plain;
    chunked.overlap.mode = Overlap::kChunked;
    chunked.overlap.chunks = 3;
    const Dag a = generate(plain, 64);
    const Dag b = generate(chunked, 64);
    int plain_coflows = 0, chunked_coflows = 0;
    const auto whole = ep_bytes(a, plain_coflows);
    const auto parts = ep_bytes(b, chunked_coflows);
    EXPECT_EQ(chunked_coflows, 3 * plain_coflows);
    EXPECT_EQ(parts, whole);  // every flow, to the byte
    EXPECT_EQ(b.total_bytes(), a.total_bytes());
    for (GpuId g = 0; g < 64; ++g) EXPECT_EQ(compute_of(b, g), compute_of(a, g));
    // Chunk c's expert task waits for dispatch chunk c and expert chunk c - 1.
    const auto task = b.find("j0.i0.g0.F0.L2.f1");
    ASSERT_TRUE(task.has_value());
    std::vector<std::string> after;
    for (const NodeRef n : b.tasks()[task->index].after) after.emplace_back(b.name(n));
    EXPECT_EQ(after, (std::vector<std::string>{"j0.i0.m0.L2.f.ep0.0.c1.to", "j0.i0.g0.F0.L2.f0"}));
    // Dispatch chunk 1 follows chunk 0; the next layer waits for all 3 combines.
    const auto d1 = b.find("j0.i0.m0.L2.f.ep0.0.c1.to");
    ASSERT_TRUE(d1.has_value());
    EXPECT_EQ(b.name(b.coflows()[d1->index].after[0]), "j0.i0.m0.L2.f.ep0.0.c0.to");
  }
}

TEST(Overlap, NoneAndOneChunkAreTodaysDag) {
  JobSpec plain = test_jobs::small_moe();
  JobSpec one = plain;
  one.overlap.mode = Overlap::kChunked;  // K = 1: nothing to overlap
  const Dag a = generate(plain, 64);
  const Dag b = generate(one, 64);
  ASSERT_EQ(a.coflows().size(), b.coflows().size());
  for (std::size_t i = 0; i < a.coflows().size(); ++i) {
    EXPECT_EQ(a.coflows()[i].name, b.coflows()[i].name);
  }
}

TEST(Overlap, DualMicroBatchComposesWithPipelines) {
  // 1F1B over pairs on PP 2, and interleaved with micro-batches a multiple of 2 x PP.
  JobSpec job = test_jobs::small_moe();
  job.parallel.micro_batches = 4;
  job.overlap.mode = Overlap::kDualMicroBatch;
  const Dag dag = generate(job, 64);
  // The pair's second micro-batch starts from the same task as the first.
  const auto a = dag.find("j0.i0.g0.F0.L1.a"), b = dag.find("j0.i0.g0.F1.L1.a");
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(dag.tasks()[a->index].after.empty());
  EXPECT_TRUE(dag.tasks()[b->index].after.empty());
  JobSpec interleaved = job;
  interleaved.schedule.pp_schedule = PpSchedule::kInterleaved;
  interleaved.schedule.virtual_stages = 2;
  EXPECT_NO_THROW(generate(interleaved, 64));
  JobSpec dualpipe = job;
  dualpipe.overlap.mode = Overlap::kChunked;
  dualpipe.overlap.chunks = 2;
  dualpipe.schedule.pp_schedule = PpSchedule::kDualPipe;
  EXPECT_NO_THROW(generate(dualpipe, 64));
}

TEST(Overlap, BadCombinationsAreOneErrorNamingTheKey) {
  auto error = [](auto change) {
    JobSpec job = test_jobs::small_moe();
    job.parallel.micro_batches = 4;
    change(job);
    return error_of([&] { job.resolve(64); });
  };
  EXPECT_TRUE(Has(error([](JobSpec& j) { j.overlap.chunks = 0; }),
                  "schedule.overlap_chunks must be at least 1"));
  EXPECT_TRUE(Has(error([](JobSpec& j) { j.overlap.chunks = 2; }),
                  "schedule.overlap_chunks (2) needs overlap = \"chunked\""));
  EXPECT_TRUE(Has(error([](JobSpec& j) {
                    j.overlap.mode = Overlap::kChunked;
                    j.overlap.chunks = 257;
                  }),
                  "schedule.overlap_chunks (257) exceeds the tokens a GPU dispatches per "
                  "micro-batch (256)"));
  EXPECT_TRUE(Has(error([](JobSpec& j) {
                    j.overlap.mode = Overlap::kDualMicroBatch;
                    j.parallel.micro_batches = 3;
                  }),
                  "it needs an even micro_batches, not 3"));
  EXPECT_TRUE(Has(error([](JobSpec& j) {
                    j.overlap.mode = Overlap::kDualMicroBatch;
                    j.schedule.pp_schedule = PpSchedule::kDualPipe;
                  }),
                  "schedule.overlap = \"dual-micro-batch\" cannot combine with pp_schedule = "
                  "\"dualpipe\""));
  EXPECT_TRUE(Has(error([](JobSpec& j) {
                    j.overlap.mode = Overlap::kDualMicroBatch;
                    j.parallel.micro_batches = 2;
                    j.schedule.pp_schedule = PpSchedule::kInterleaved;
                    j.schedule.virtual_stages = 2;
                  }),
                  "needs micro_batches (2) to be a multiple of 2 x pp (4)"));
  EXPECT_TRUE(Has(error([](JobSpec& j) { j.overlap.comm_sms = 132; }),
                  "schedule.comm_sms (132) must be below gpu_sms (132)"));
  EXPECT_TRUE(Has(error([](JobSpec& j) { j.overlap.expert_swap = ExpertSwap::kPerStep; }),
                  "moe.expert_swap = \"per-step\" needs each expert's load per iteration"));
  EXPECT_TRUE(Has(error([](JobSpec& j) {
                    j.overlap.mode = Overlap::kChunked;
                    j.parallel.ep = 1;
                  }),
                  "schedule.overlap = \"chunked\" splits the EP all-to-all"));
}

}  // namespace
}  // namespace shoal::work
