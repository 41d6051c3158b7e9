// Training job files (jobs/*.toml): read_job_file, then resolved against a
// 1,024-GPU fabric of 8-GPU servers, and the job's traffic in closed form.
#include "shoal/work/job_file.hpp"
#include "fuzz_common.hpp"
#include "shoal/work/training_dag.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (shoal::fuzz::hits_toml_unicode_bug(shoal::fuzz::text(data, size))) return -1;  // not ours
  const std::string path = shoal::fuzz::write_input(data, size, "job.toml");
  shoal::fuzz::expect_only_errors([&] {
    shoal::work::JobSpec job = shoal::work::read_job_file(path);
    job.resolve(1024, 8);
    shoal::work::ep_pair_bytes(job);
    shoal::work::ep_weights(job);
  });
  return 0;
}
