// Ring attention (docs/training.md, "Context and sequence parallelism"):
// its bytes exactly on an odd ring in both forms, its steps splitting the
// attention's compute to the picosecond, the exposed communication that
// overlapping the steps hides against the hand calculation, and the causal
// mask's FLOPs.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "shoal/work/training_dag.hpp"
#include "training_cases.hpp"

namespace shoal::work {
namespace {

using namespace test_jobs;

/// gqa_dense on a CP ring of 3.
JobSpec gqa_ring(bool overlap) {
  JobSpec j = gqa_dense();
  j.parallel.cp = 3;
  j.parallel.cp_overlap = overlap;
  return j;
}

std::size_t at(const Dag& dag, const std::string& name) {
  const auto node = dag.find(name);
  if (!node) throw Error("no node " + name);
  return node->index;
}

// Forward, each rank sends its K and V block on CP - 1 times; backward the
// blocks again and their gradients: with overlap in CP - 1 (forward) and CP
// (backward) exchanges of one block each to the ring neighbour, the backward's
// middle ones carrying both; without, in one coflow per ring and pass.
TEST(RingAttention, BytesExactlyOnThreeRanksInBothForms) {
  const Bytes block = 256 * 6 * 64 * 2 * 2;  // 768 / 3 tokens x 6 KV heads x 64 x (K, V) x 2 bytes
  for (const bool overlap : {true, false}) {
    SCOPED_TRACE(overlap ? "overlapped" : "blocking");
    JobSpec job = gqa_ring(overlap);
    const Dag dag = generate(job, 6);  // tp 1 x cp 3 x pp 1 x dp 2
    ASSERT_EQ(job.parallel.dp, 2u);
    EXPECT_EQ(cp_block_bytes(job), block);
    int forward = 0, backward = 0;
    Bytes sent[2][6] = {};  // by pass and GPU
    for (const Coflow& c : dag.coflows()) {
      if (c.labels.type != CoflowType::kCp) continue;
      const bool f = c.name.find(".f.cp") != std::string::npos;
      (f ? forward : backward)++;
      ASSERT_EQ(dag.flows_of(c).size(), 3u);
      for (const Flow& flow : dag.flows_of(c)) {
        sent[f ? 0 : 1][flow.src] += flow.bytes;
        // A ring of consecutive GPUs (tp-cp-ep-dp-pp), forward to the next
        // rank and backward to the previous one (Transformer Engine).
        EXPECT_EQ(flow.dst / 3, flow.src / 3);
        EXPECT_EQ(flow.dst % 3, (flow.src % 3 + (f ? 1 : 2)) % 3) << c.name;
        if (overlap && !f) {
          const bool middle = c.name.ends_with(".s1");
          EXPECT_EQ(flow.bytes, (middle ? 2 : 1) * block) << c.name;
        } else {
          EXPECT_EQ(flow.bytes, (overlap ? 1 : f ? 2 : 4) * block) << c.name;
        }
      }
    }
    // 2 layers x 2 rings (one per data-parallel replica), each pass.
    EXPECT_EQ(forward, 4 * (overlap ? 2 : 1));
    EXPECT_EQ(backward, 4 * (overlap ? 3 : 1));
    for (GpuId g = 0; g < 6; ++g) {
      EXPECT_EQ(sent[0][g], 2 * 2 * block);  // 2 layers
      EXPECT_EQ(sent[1][g], 2 * 4 * block);
    }
    const JobTraffic t = job_traffic(job, dag, 8);
    EXPECT_EQ(t.cp_per_layer_pass, 2 * block);
  }
}

// The steps share the attention's time: the projections and the first
// block's products in step 0, each later step one block's, together exactly
// the blocking form's one task; each step waits for its GPU's step before
// and for the exchange that brought its block.
TEST(RingAttention, StepsSplitTheAttentionToThePicosecond) {
  JobSpec overlapped = gqa_ring(true), blocking = gqa_ring(false);
  const Dag steps = generate(overlapped, 6), whole = generate(blocking, 6);
  EXPECT_EQ(steps.tasks().size(),
            whole.tasks().size() + 2 * 2 * 2 * 6);  // 2 more per layer, pass, GPU
  const double share = attention_core_share(overlapped.rank_view(), 0);
  EXPECT_GT(share, 0.1);
  EXPECT_LT(share, 0.9);
  for (const char* pass : {"F", "B"}) {
    for (GpuId g = 0; g < 6; ++g) {
      const std::string a = "j0.i0.g" + std::to_string(g) + "." + pass + "0.L2.a";
      const Time total = whole.tasks()[at(whole, a)].duration;
      const ComputeTask& s0 = steps.tasks()[at(steps, a + ".s0")];
      const ComputeTask& s1 = steps.tasks()[at(steps, a + ".s1")];
      const ComputeTask& s2 = steps.tasks()[at(steps, a)];
      EXPECT_EQ(s0.duration + s1.duration + s2.duration, total) << a;
      EXPECT_EQ(s1.duration, s2.duration);
      EXPECT_EQ(s1.duration, std::llround(static_cast<double>(total) * share) / 3) << a;
      // Step 2 waits for step 1 and the exchange before it.
      ASSERT_EQ(s2.after.size(), 2u);
      EXPECT_EQ(steps.name(s2.after[0]), a + ".s1");
      EXPECT_EQ(steps.name(s2.after[1]).substr(0, 14),
                std::string("j0.i0.m0.L2.") + (pass[0] == 'F' ? "f" : "b") + ".");
      EXPECT_TRUE(steps.name(s2.after[1]).ends_with(".s1"));
    }
  }
}

/// One dense layer on 2 GPUs (one per server) of one switch, CP 2: each rank
/// holds 2,048 of the 4,096 tokens and an 8 MiB K and V block.
JobSpec one_layer_cp2(bool overlap) {
  JobSpec j;
  j.file = "one-layer-cp2";
  j.model = {"one layer", 1, 1024, 8, 0, 4096, 1000, 4096, true, 2, 0, 0, 0, 0, 0};
  j.parallel.cp = 2;
  j.parallel.cp_overlap = overlap;
  j.parallel.micro_batches = 1;
  j.parallel.micro_batch_tokens = 4096;
  j.gpu.peak_tflops = 100;
  j.gpu.efficiency = 1.0;
  j.schedule.grad_norm_barrier = false;
  return j;
}

// The hand calculation for CP 2, with X one exchange of a block, X2 the
// blocking backward's ring of two blocks, P + q the forward's step 0 and q its
// step 1 (backward Pb + qb and qb):
//   blocking  forward X + P + 2q; backward X2 + Pb + 2qb;
//   overlap   forward max(P + q, X) + q: step 1 waits for step 0 and the block;
//             backward max(Pb + qb, X) + max(qb, X): the gradients' exchange
//             leaves after step 0 and the K and V block, beside step 1.
// Everything else (the FFN, the LM head, the data-parallel reduction) is the
// same in both, so the optimizer starts earlier by the difference. Measured
// at a rate where the compute hides the ring (1.6 Tb/s) and where the ring
// dominates (50 Gb/s).
TEST(RingAttention, OverlapHidesWhatTheHandCalculationSays) {
  for (const BitsPerSecond rate : {1.6e12, 50e9}) {
    SCOPED_TRACE("link rate " + std::to_string(rate));
    const topo::Fabric fabric = two_gpu_fabric(rate, 1'000'000);
    JobSpec b = one_layer_cp2(false), o = one_layer_cp2(true);
    const Dag blocking = generate(b, 2), overlapped = generate(o, 2);
    const exec::RunResults rb = simulate(fabric, blocking), ro = simulate(fabric, overlapped);
    // X and X2 as the blocking run measures them: from the ring's first flow
    // to the attention that waited for it.
    const auto ring_time = [&](const std::string& ring, const std::string& task) {
      const Coflow& c = blocking.coflows()[at(blocking, ring)];
      Time start = kTimeInfinity;
      for (std::uint32_t f = c.first_flow; f < c.first_flow + c.flow_count; ++f) {
        start = std::min(start, rb.flow_start[f]);
      }
      return rb.task_start[at(blocking, task)] - start;
    };
    const Time x = ring_time("j0.i0.m0.L1.f.cp0.0", "j0.i0.g0.F0.L1.a");
    const Time x2 = ring_time("j0.i0.m0.L1.b.cp0.0", "j0.i0.g0.B0.L1.a");
    const auto duration = [&](const std::string& name) {
      return overlapped.tasks()[at(overlapped, name)].duration;
    };
    const Time p_q = duration("j0.i0.g0.F0.L1.a.s0"), q = duration("j0.i0.g0.F0.L1.a");
    const Time pb_qb = duration("j0.i0.g0.B0.L1.a.s0"), qb = duration("j0.i0.g0.B0.L1.a");
    const Time saved = (x + p_q + q) + (x2 + pb_qb + qb) - (std::max(p_q, x) + q) -
                       (std::max(pb_qb, x) + std::max(qb, x));
    if (rate > 1e12) {
      ASSERT_LT(x, qb);  // the compute hides every exchange
      EXPECT_EQ(saved, x + x2);
    } else {
      ASSERT_GT(x, pb_qb);  // the ring dominates
    }
    for (const GpuId g : {0u, 1u}) {
      SCOPED_TRACE("GPU " + std::to_string(g));
      const std::string opt = "j0.i0.g" + std::to_string(g) + ".opt";
      const Time gained = rb.task_start[at(blocking, opt)] - ro.task_start[at(overlapped, opt)];
      // The exchanges differ from X by the order in which the switch
      // serializes the cells: a few nanoseconds each.
      EXPECT_NEAR(static_cast<double>(gained), static_cast<double>(saved), 10'000);
      EXPECT_EQ(ro.gpu_busy[g], rb.gpu_busy[g]);  // the compute is not double-counted
    }
    EXPECT_EQ(overlapped.total_bytes(), blocking.total_bytes());
  }
}

// A causal mask keeps half the query-key pairs (FlashAttention's count): the
// score and value products halve, the projections stay.
TEST(RingAttention, CausalMaskHalvesTheProducts) {
  JobSpec full = one_layer_cp2(true);
  JobSpec causal = full;
  causal.model.causal = true;
  for (JobSpec* j : {&full, &causal}) j->resolve(2);
  const JobSpec f = full.rank_view(), c = causal.rank_view();
  // 2,048 tokens on a rank: projections 2 x 4 h^2, products 4 h s per token at 100 TFLOP/s.
  const double h = 1024, tokens = 2048, s = 4096;
  const double projections = tokens * 2 * 4 * h * h, products = tokens * 4 * s * h;
  EXPECT_EQ(attention_time(f, 0), std::llround((projections + products) / 100));
  EXPECT_EQ(attention_time(c, 0), std::llround((projections + products / 2) / 100));
  EXPECT_DOUBLE_EQ(attention_core_share(f, 0), products / (projections + products));
  EXPECT_DOUBLE_EQ(attention_core_share(c, 0), products / 2 / (projections + products / 2));
  // Packed sequences: half of each sequence's squared length.
  EXPECT_EQ(attention_time(c, 0, 1000.0 * 1000),
            std::llround((projections + 4 * h * 1000.0 * 1000 / 2) / 100));
}

}  // namespace
}  // namespace shoal::work
