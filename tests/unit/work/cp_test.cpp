// Context parallelism (ring attention), Ulysses sequence parallelism and
// sequence-length laws in the training generator: bytes exactly on odd
// degrees, attention time as the sum of squared lengths, and the errors
// (docs/training.md, "Context and sequence parallelism", "Sequence lengths").
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "error_checks.hpp"
#include "shoal/work/job_file.hpp"
#include "shoal/work/sequence_lengths.hpp"
#include "shoal/work/training_dag.hpp"
#include "training_cases.hpp"

namespace shoal::work {
namespace {

using namespace test_jobs;
using test::error_of;
using test::Has;

/// A temporary file (removed at the end).
class TempFile {
 public:
  explicit TempFile(const std::string& text, const std::string& ext = ".txt")
      : path_((std::filesystem::temp_directory_path() /
               ("shoal_cp_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name() + ext))
                  .string()) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const ComputeTask& task_named(const Dag& dag, const std::string& name) {
  for (const ComputeTask& t : dag.tasks()) {
    if (t.name == name) return t;
  }
  throw Error("no task " + name);
}

TEST(ContextParallel, GradientsReduceOverCpTimesDp) {
  JobSpec job = gqa_dense();
  job.parallel.cp = 3;
  job.schedule.dp_bucket = ScheduleSpec::Bucket::kLayer;
  const Dag dag = generate(job, 6);
  // Megatron-Core reduces the dense gradients over DP x CP: one ring of 6.
  for (const Coflow& c : dag.coflows()) {
    if (c.labels.type == CoflowType::kDp && c.name.ends_with(".rs")) {
      EXPECT_EQ(dag.flows_of(c).size(), 6u) << c.name;
    }
  }
}

TEST(ContextParallel, ExpertGroupsSpanTheCpRanksFirst) {
  JobSpec job = small_moe();  // tp 2, pp 2, ep 4
  job.parallel.cp = 2;
  job.parallel.micro_batch_tokens = 1024;
  const Dag dag = generate(job, 64);  // dp 8, cp x dp 16
  ASSERT_EQ(job.parallel.dp, 8u);
  for (const Coflow& c : dag.coflows()) {
    if (c.labels.type != CoflowType::kEp) continue;
    // EP members tp + 2 k, k = 0..3 (Megatron-Core's expert ranks): two CP rings.
    for (const Flow& f : dag.flows_of(c)) EXPECT_EQ(f.src / 8, f.dst / 8) << c.name;
  }
  // EP's dispatch counts one CP rank's tokens: 512 / TP x top_k x h x 2 x 3/4.
  const JobTraffic t = job_traffic(job, dag, 8);
  EXPECT_EQ(t.ep_dispatch_per_gpu, 256 * 2 * 1024 * 2 * 3 / 4);
  EXPECT_EQ(t.pp_per_send, 512 * 1024 * 2 / 2);
}

TEST(Ulysses, AllToAllBytesExactlyOnThreeRanks) {
  JobSpec job = gqa_dense();
  job.parallel.tp = 3;
  job.parallel.sp = SpMode::kUlysses;
  const Dag dag = generate(job, 3);
  // Per pair: 768 tokens / 3 on a GPU, a third of the width, 2 bytes.
  const Bytes qkv = 768 * (12 + 2 * 6) * 64 * 2 / 9;  // Q, K, V
  const Bytes out = 768 * 768 * 2 / 9;                // the attention's output
  EXPECT_EQ(qkv, 262144);
  EXPECT_EQ(out, 131072);
  int coflows = 0;
  for (const Coflow& c : dag.coflows()) {
    if (c.labels.type == CoflowType::kTp) {
      // The MLP's all-reduce remains: 2 (TP - 1) / TP x S.
      for (const Flow& f : dag.flows_of(c)) EXPECT_EQ(f.bytes, 2 * 2 * 768 * 768 * 2 / 3);
      continue;
    }
    if (c.labels.type != CoflowType::kCp) continue;
    ++coflows;
    const bool forward = c.name.find(".f.sp") != std::string::npos;
    const bool in = c.name.ends_with(".in");
    ASSERT_EQ(dag.flows_of(c).size(), 6u);
    for (const Flow& f : dag.flows_of(c)) EXPECT_EQ(f.bytes, in == forward ? qkv : out) << c.name;
  }
  EXPECT_EQ(coflows, 2 * 2 * 2);  // 2 layers x 2 passes x before and after
  EXPECT_EQ(ulysses_bytes(job, true), 2 * qkv);
  EXPECT_EQ(ulysses_bytes(job, false), 2 * out);
}

TEST(Ulysses, HeadsMustDivideByTheDegree) {
  JobSpec job = gqa_dense();
  job.parallel.tp = 4;  // 12 heads divide, 6 KV heads do not
  job.parallel.sp = SpMode::kUlysses;
  EXPECT_TRUE(Has(error_of([&] { job.resolve(4); }),
                  "parallelism.sp = \"ulysses\" splits the heads over the tp (4) ranks"));
}

TEST(ContextParallel, BadCombinationsAreOneLineEach) {
  JobSpec gpus = gqa_dense();
  gpus.parallel.cp = 3;
  EXPECT_EQ(error_of([&] { gpus.resolve(8); }),
            "job gqa: 8 GPUs do not factor as tp (1) x cp (3) x pp (1) x dp");
  JobSpec tokens = gqa_dense();
  tokens.parallel.cp = 5;
  EXPECT_TRUE(Has(error_of([&] { tokens.resolve(10); }),
                  "parallelism.micro_batch_tokens (768) must divide by cp (5)"));
  JobSpec order = small_moe();
  order.parallel.cp = 2;
  order.parallel.micro_batch_tokens = 1024;
  order.parallel.order = "tp-cp-dp-ep-pp";
  EXPECT_TRUE(Has(error_of([&] { order.resolve(64); }),
                  "cp, ep and dp must follow each other in that order"));
  JobSpec ep = small_moe();
  ep.parallel.cp = 2;
  ep.parallel.ep = 16;
  ep.parallel.micro_batch_tokens = 1024;
  EXPECT_TRUE(Has(error_of([&] { ep.resolve(32); }), "parallelism.ep (16) must divide cp x dp"));
}

TEST(ContextParallel, DefaultsLeaveTheDagAlone) {
  // cp = 1, sp = "none", fixed lengths: no CP coflow, and the rank view is the job.
  JobSpec job = small_moe();
  const Dag dag = generate(job, 64);
  for (const Coflow& c : dag.coflows()) EXPECT_NE(c.labels.type, CoflowType::kCp);
  EXPECT_EQ(job.rank_view().parallel.micro_batch_tokens, job.parallel.micro_batch_tokens);
}

// --- sequence lengths ---

TEST(SequenceLengths, AttentionFollowsTheSumOfSquaredLengths) {
  const TempFile lengths("# measured\n100\n250\n\n300  # cut to fit\n7\n");
  JobSpec job = tiny_dense(2);  // 512 tokens, 100 TFLOP/s at 100%: flops / 100 ps
  job.sequences.law = LengthLaw::kFile;
  job.sequences.file = lengths.path();
  const Dag dag = generate(job, 2);
  // Attention: 2 x 4 h^2 per token + 4 h per query-key pair of each sequence.
  const double h = 1024, linear = 512 * 2 * 4 * h * h;
  // Micro-batch 0: 100, 250 and 300 cut to 162; micro-batch 1: 7, 100, 250, 300 cut to 155.
  const double mb0 = 100.0 * 100 + 250 * 250 + 162 * 162,
               mb1 = 7.0 * 7 + 100 * 100 + 250 * 250 + 155 * 155;
  EXPECT_EQ(task_named(dag, "j0.i0.g0.F0.L1.a").duration,
            std::llround((linear + 4 * h * mb0) / 100));
  EXPECT_EQ(task_named(dag, "j0.i0.g0.F1.L1.a").duration,
            std::llround((linear + 4 * h * mb1) / 100));
  // Fixed: every sequence 512 long, as before the law (4 s h per token).
  JobSpec fixed = tiny_dense(2);
  const Dag before = generate(fixed, 2);
  EXPECT_EQ(task_named(before, "j0.i0.g0.F0.L1.a").duration,
            std::llround(512 * (2 * 4 * h * h + 4 * 512 * h) / 100));
  EXPECT_EQ(task_named(before, "j0.i0.g0.F1.L1.a").duration,
            task_named(before, "j0.i0.g0.F0.L1.a").duration);
  // The rest of the compute does not change.
  EXPECT_EQ(task_named(dag, "j0.i0.g0.F0.L1.f").duration,
            task_named(before, "j0.i0.g0.F0.L1.f").duration);
}

TEST(SequenceLengths, LawsAreSeededAndDeterministic) {
  SequenceSpec uniform;
  uniform.law = LengthLaw::kUniform;
  uniform.min = 128;
  uniform.max = 128;
  const SequencePacking exact(uniform, 512, 2, 3, 2, 0);
  EXPECT_EQ(exact.square_sum(1, 2, 1), 4.0 * 128 * 128);
  uniform.min = 1;
  uniform.max = 600;  // longer than the micro-batch: cut to fit
  const SequencePacking a(uniform, 512, 2, 3, 2, 0), b(uniform, 512, 2, 3, 2, 0);
  uniform.seed = 2;
  const SequencePacking c(uniform, 512, 2, 3, 2, 0);
  bool differ = false, vary = false;
  for (std::uint32_t it = 0; it < 2; ++it) {
    for (std::uint32_t mb = 0; mb < 3; ++mb) {
      for (std::uint32_t x = 0; x < 2; ++x) {
        EXPECT_EQ(a.square_sum(it, mb, x), b.square_sum(it, mb, x));
        EXPECT_GE(a.square_sum(it, mb, x), 512.0);        // at least 512 sequences of 1
        EXPECT_LE(a.square_sum(it, mb, x), 512.0 * 512);  // at most one of 512
        differ |= a.square_sum(it, mb, x) != c.square_sum(it, mb, x);
        vary |= a.square_sum(it, mb, x) != a.square_sum(0, 0, 0);
      }
    }
  }
  EXPECT_TRUE(differ);
  EXPECT_TRUE(vary);
  SequenceSpec lognormal;
  lognormal.law = LengthLaw::kLogNormal;
  lognormal.mu = 5;
  lognormal.sigma = 0;  // every length round(e^5) = 148
  const SequencePacking d(lognormal, 512, 1, 1, 1, 0);
  EXPECT_EQ(d.square_sum(0, 0, 0), 3.0 * 148 * 148 + 68.0 * 68);
  // The same DAG twice, seeded.
  JobSpec one = tiny_dense(2), two = tiny_dense(2);
  for (JobSpec* j : {&one, &two}) {
    j->sequences.law = LengthLaw::kLogNormal;
    j->sequences.mu = 5;
    j->sequences.sigma = 1;
  }
  const Dag x = generate(one, 2), y = generate(two, 2);
  ASSERT_EQ(x.tasks().size(), y.tasks().size());
  for (std::size_t i = 0; i < x.tasks().size(); ++i) {
    EXPECT_EQ(x.tasks()[i].duration, y.tasks()[i].duration);
  }
}

TEST(SequenceLengths, ABadFileIsOneLineNamingFileAndLine) {
  const TempFile text("100\nabc\n");
  EXPECT_EQ(error_of([&] { read_sequence_lengths(text.path()); }),
            "sequence lengths " + text.path() + ":2: \"abc\" is not a positive integer length");
  const TempFile zero("# c\n0\n");
  EXPECT_TRUE(Has(error_of([&] { read_sequence_lengths(zero.path()); }), ":2: \"0\" is not"));
  const TempFile negative("5\n-3\n");
  EXPECT_TRUE(Has(error_of([&] { read_sequence_lengths(negative.path()); }), ":2: \"-3\" is not"));
  const TempFile fraction("5.5\n");
  EXPECT_TRUE(Has(error_of([&] { read_sequence_lengths(fraction.path()); }), ":1: \"5.5\" is not"));
  const TempFile empty("# nothing\n\n");
  EXPECT_EQ(error_of([&] { read_sequence_lengths(empty.path()); }),
            "sequence lengths " + empty.path() + ": the file holds no length");
}

constexpr const char* kModel =
    "[model]\nlayers = 4\nhidden = 64\nheads = 4\nffn = 128\nvocab = 100\nsequence = 16\n";

TEST(SequenceLengths, JobFileKeysAndTheirErrors) {
  const TempFile good(std::string(kModel) +
                          "[parallelism]\ncp = 2\nsp = \"ulysses\"\n"
                          "[data]\nsequence_lengths = \"uniform\"\nsequence_min = 4\n"
                          "sequence_max = 64\nsequence_seed = 7\n",
                      ".toml");
  const JobSpec job = read_job_file(good.path());
  EXPECT_EQ(job.parallel.cp, 2u);
  EXPECT_EQ(job.parallel.sp, SpMode::kUlysses);
  EXPECT_EQ(job.sequences.law, LengthLaw::kUniform);
  EXPECT_EQ(job.sequences.max, 64u);
  EXPECT_EQ(job.sequences.seed, 7u);
  EXPECT_TRUE(job.parallel.cp_overlap);  // Transformer Engine's ring
  EXPECT_FALSE(job.model.causal);        // Megatron's FLOPs count
  const TempFile keys(std::string(kModel) + "causal = true\n[parallelism]\ncp_overlap = false\n",
                      ".toml");
  const JobSpec set = read_job_file(keys.path());
  EXPECT_FALSE(set.parallel.cp_overlap);
  EXPECT_TRUE(set.model.causal);
  const auto error = [](const std::string& extra) {
    const TempFile f(std::string(kModel) + extra, ".toml");
    return error_of([&] { read_job_file(f.path()); });
  };
  EXPECT_TRUE(Has(error("[parallelism]\nsp = \"ring\"\n"),
                  "parallelism.sp \"ring\" is unknown (none or ulysses)"));
  EXPECT_TRUE(Has(error("[data]\nsequence_lengths = \"zipf\"\n"),
                  "data.sequence_lengths \"zipf\" is unknown"));
  EXPECT_TRUE(Has(error("[data]\nsequence_lengths = \"uniform\"\nsequence_min = 9\n"
                        "sequence_max = 8\n"),
                  "data.sequence_lengths = \"uniform\" needs 1 <= sequence_min <= sequence_max"));
  EXPECT_TRUE(Has(error("[data]\nsequence_lengths = \"lognormal\"\nsequence_sigma = -1\n"),
                  "sequence_sigma >= 0"));
  EXPECT_TRUE(Has(error("[data]\nsequence_lengths = \"file\"\n"),
                  "data.sequence_lengths = \"file\" needs sequence_file"));
  EXPECT_TRUE(Has(error("[data]\nsequence_file = \"\"\n"), "data.sequence_file is empty"));
  EXPECT_TRUE(Has(error("[parallelism]\ncp_overlap = \"yes\"\n"), "cp_overlap"));
  EXPECT_TRUE(Has(error("[parallelism]\ncp_overlap = \"yes\"\n"), "true or false"));
}

}  // namespace
}  // namespace shoal::work
