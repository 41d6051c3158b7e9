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

}  // namespace
}  // namespace shoal::work
