// Job files (src/work/job_file.cpp): numbers beyond what a job can hold are one
// clear error, not cut to 32 bits or left to overflow the factoring (both found
// while writing the fuzz targets, tests/fuzz).
#include "shoal/work/job_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "error_checks.hpp"

namespace shoal::work {
namespace {

using test::error_of;
using test::Has;

constexpr const char* kModel =
    "[model]\nlayers = 4\nhidden = 64\nheads = 4\nffn = 128\nvocab = 100\nsequence = 16\n";

/// Writes a job file (removed at the end) and returns its path.
class JobFile {
 public:
  explicit JobFile(const std::string& text)
      : path_((std::filesystem::temp_directory_path() /
               ("shoal_job_file_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".toml"))
                  .string()) {
    std::ofstream(path_) << text;
  }
  ~JobFile() { std::filesystem::remove(path_); }
  JobFile(const JobFile&) = delete;
  JobFile& operator=(const JobFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(JobFile, ReadsAJob) {
  const JobFile file(std::string(kModel) + "[parallelism]\ntp = 2\npp = 2\nmicro_batches = 4\n");
  const JobSpec job = read_job_file(file.path());
  EXPECT_EQ(job.model.layers, 4u);
  EXPECT_EQ(job.parallel.tp, 2u);
  EXPECT_EQ(job.parallel.micro_batches, 4u);
}

TEST(JobFile, ReadsTheEpWireFormat) {
  const JobFile file(std::string(kModel) +
                     "[moe]\nexperts = 8\ntop_k = 2\nexpert_ffn = 32\nnode_limit = 2\n"
                     "dispatch_dtype_bytes = 1\nbackward_dispatch_dtype_bytes = 1\n"
                     "ep_dedup = \"per-node\"\n");
  const JobSpec job = read_job_file(file.path());
  EXPECT_EQ(job.model.node_limit, 2u);
  EXPECT_EQ(job.ep_comm.dedup, EpDedup::kPerNode);
  EXPECT_EQ(job.ep_comm.dtype_bytes[static_cast<std::size_t>(EpTransfer::kDispatch)], 1u);
  EXPECT_EQ(job.ep_comm.dtype_bytes[static_cast<std::size_t>(EpTransfer::kCombine)], 0u);
  EXPECT_EQ(job.ep_comm.dtype_bytes[static_cast<std::size_t>(EpTransfer::kBackwardDispatch)], 1u);
  const JobFile dedup(std::string(kModel) + "[moe]\nep_dedup = \"per-rack\"\n");
  EXPECT_EQ(error_of([&] { read_job_file(dedup.path()); }),
            "config " + dedup.path() +
                ": moe.ep_dedup \"per-rack\" is unknown (auto, per-expert, per-gpu or per-node)");
  const JobFile dtype(std::string(kModel) + "[moe]\ncombine_dtype_bytes = 9\n");
  EXPECT_EQ(
      error_of([&] { read_job_file(dtype.path()); }),
      "config " + dtype.path() + ": moe.combine_dtype_bytes must be 1 to 8 (1: fp8, 2: bf16)");
}

TEST(JobFile, CountsBeyondTheirFieldAreErrors) {
  // layers is 32 bits: 4294967297 was read as 1.
  const JobFile layers("[model]\nlayers = 4294967297\n");
  EXPECT_EQ(error_of([&] { read_job_file(layers.path()); }),
            "config " + layers.path() + ": model.layers must be at most 4294967295");
  const JobFile negative("[moe]\nexperts = -1\n");
  EXPECT_EQ(error_of([&] { read_job_file(negative.path()); }),
            "config " + negative.path() + ": moe.experts must not be negative");
}

TEST(JobFile, ParallelismBeyondTheLargestFabricIsAnError) {
  // tp x pp = 2^32 was 0 in 32 bits, and resolve() divided by it (SIGFPE).
  const JobFile product(std::string(kModel) + "[parallelism]\ntp = 65536\npp = 65536\n");
  EXPECT_EQ(
      error_of([&] { read_job_file(product.path()); }),
      "config " + product.path() + ": parallelism.tp x pp x dp = 4294967296 GPUs; at most 1048576");
  const JobFile one(std::string(kModel) + "[parallelism]\ndp = 2000000\n");
  EXPECT_EQ(error_of([&] { read_job_file(one.path()); }),
            "config " + one.path() + ": parallelism.dp must be at most 1048576 (GPUs)");
  const JobFile fits(std::string(kModel) + "[parallelism]\ntp = 1024\npp = 1024\n");
  EXPECT_EQ(read_job_file(fits.path()).parallel.pp, 1024u);
}

TEST(JobFile, SizesPastSixtyFourBitsAreOneErrorNotAWrappedNumber) {
  // hidden = 4e12 squared wrapped in 64 bits, and a traffic report printed
  // negative petabytes; a task's time from huge sizes came out negative.
  const JobFile hidden(
      "[model]\nlayers = 4\nhidden = 4000000000000\nheads = 4\nffn = 128\nvocab = 100\n"
      "sequence = 16\n[parallelism]\nmicro_batch_tokens = 16\n");
  JobSpec wide = read_job_file(hidden.path());
  EXPECT_TRUE(Has(error_of([&] { wide.resolve(64, 8); }),
                  "a transfer of this job passes what 64 bits hold (2^62 bytes)"));
  // A layer of 7e10 parameters over 1e10 tokens: about a year of one GPU.
  const JobFile tokens(
      "[model]\nlayers = 4\nhidden = 65536\nheads = 64\nffn = 262144\nvocab = 100\n"
      "sequence = 16\n[parallelism]\nmicro_batch_tokens = 10000000000\n");
  JobSpec slow = read_job_file(tokens.path());
  EXPECT_TRUE(Has(error_of([&] { slow.resolve(64, 8); }), "a layer's compute would take"));
  // Large but representable: 2^30 tokens of the small model resolve.
  const JobFile fits(std::string(kModel) + "[parallelism]\nmicro_batch_tokens = 1073741824\n");
  JobSpec ok = read_job_file(fits.path());
  ok.resolve(64, 8);
  EXPECT_EQ(ok.parallel.micro_batch_tokens, 1073741824u);
}

TEST(JobFile, ReadsTheSchedule) {
  const JobFile file(std::string(kModel) +
                     "[schedule]\ndp_reduce = \"every-micro-batch\"\ndp_bucket = \"160MB\"\n"
                     "grad_reduce_dtype_bytes = 2\ngrad_norm_barrier = false\n");
  const ScheduleSpec s = read_job_file(file.path()).schedule;
  EXPECT_EQ(s.dp_reduce, DpReduce::kEveryMicroBatch);
  EXPECT_EQ(s.dp_bucket, ScheduleSpec::Bucket::kParameters);
  EXPECT_EQ(s.dp_bucket_bytes, 160'000'000u);
  EXPECT_EQ(s.grad_reduce_dtype_bytes, 2u);
  EXPECT_FALSE(s.grad_norm_barrier);
  const JobFile parameters(std::string(kModel) + "[schedule]\ndp_bucket = 40000000\n");
  EXPECT_EQ(read_job_file(parameters.path()).schedule.dp_bucket_parameters, 40'000'000u);
  const JobFile named(std::string(kModel) + "[schedule]\ndp_bucket = \"deepspeed\"\n");
  EXPECT_EQ(read_job_file(named.path()).schedule.dp_bucket, ScheduleSpec::Bucket::kDeepSpeed);
  // The defaults: Megatron-LM's (docs/training.md).
  const JobFile none(kModel);
  const ScheduleSpec d = read_job_file(none.path()).schedule;
  EXPECT_EQ(d.dp_reduce, DpReduce::kLastMicroBatch);
  EXPECT_EQ(d.dp_bucket, ScheduleSpec::Bucket::kMegatron);
  EXPECT_EQ(d.grad_reduce_dtype_bytes, 4u);
  EXPECT_TRUE(d.grad_norm_barrier);
}

TEST(JobFile, ABadScheduleIsOneLineNamingTheKey) {
  const JobFile reduce(std::string(kModel) + "[schedule]\ndp_reduce = \"sometimes\"\n");
  EXPECT_EQ(error_of([&] { read_job_file(reduce.path()); }),
            "config " + reduce.path() +
                ": schedule.dp_reduce \"sometimes\" is unknown (last-micro-batch or "
                "every-micro-batch)");
  const JobFile zero(std::string(kModel) + "[schedule]\ndp_bucket = 0\n");
  EXPECT_EQ(error_of([&] { read_job_file(zero.path()); }),
            "config " + zero.path() + ": schedule.dp_bucket must be at least one parameter");
  const JobFile zero_bytes(std::string(kModel) + "[schedule]\ndp_bucket = \"0MB\"\n");
  EXPECT_EQ(error_of([&] { read_job_file(zero_bytes.path()); }),
            "config " + zero_bytes.path() + ": schedule.dp_bucket must be at least one byte");
  const JobFile word(std::string(kModel) + "[schedule]\ndp_bucket = \"huge\"\n");
  EXPECT_TRUE(Has(error_of([&] { read_job_file(word.path()); }),
                  "schedule.dp_bucket \"huge\" is neither megatron, deepspeed, layer, buffer"));
  const JobFile dtype(std::string(kModel) + "[schedule]\ngrad_reduce_dtype_bytes = 0\n");
  EXPECT_EQ(error_of([&] { read_job_file(dtype.path()); }),
            "config " + dtype.path() +
                ": schedule.grad_reduce_dtype_bytes must be 1 to 8 (2: bf16, 4: fp32)");
}

// A run config's [job] overrides the job file, the model's depth and mask included.
TEST(JobFile, RunConfigJobTableOverridesIt) {
  JobSpec spec;
  {
    const JobFile job(std::string(kModel) + "[parallelism]\ncp = 2\n");
    spec = read_job_file(job.path());
  }
  const JobFile run("[job]\nlayers = 2\ncausal = true\ncp_overlap = false\ntp = 2\n");
  config::ConfigFile config(run.path());
  apply_job_overrides(config, "job", spec);
  EXPECT_EQ(spec.model.layers, 2u);
  EXPECT_TRUE(spec.model.causal);
  EXPECT_FALSE(spec.parallel.cp_overlap);
  EXPECT_EQ(spec.parallel.tp, 2u);
  EXPECT_EQ(spec.parallel.cp, 2u);
  std::ofstream(run.path()) << "[job]\nlayers = -1\n";
  config::ConfigFile bad_config(run.path());
  EXPECT_TRUE(Has(error_of([&] { apply_job_overrides(bad_config, "job", spec); }), "job.layers"));
  // A zero is named at the run config's key, not later against the job file.
  std::ofstream(run.path()) << "[job]\npp = 0\n";
  config::ConfigFile zero(run.path());
  EXPECT_EQ(error_of([&] { apply_job_overrides(zero, "job", spec); }),
            "config " + run.path() + ": job.pp must be positive");
}

}  // namespace
}  // namespace shoal::work
