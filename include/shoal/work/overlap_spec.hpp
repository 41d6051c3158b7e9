// How a training job overlaps the EP all-to-all with compute, what the
// communication kernels take from the GPU while they do, and whether experts
// move between GPUs after each step (docs/training.md, "Overlap" and
// "Per-step expert swaps"). Read from the job file's [schedule], [gpu] and
// [moe] tables, or a run config's [job].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace shoal::config {
class ConfigFile;
}

namespace shoal::work {

struct JobSpec;

enum class Overlap : std::uint8_t {
  kNone,            // each micro-batch's passes in turn: a GPU idles through its all-to-alls
  kDualMicroBatch,  // micro-batches 2k and 2k + 1 side by side (two-batch overlap)
  kChunked,         // each all-to-all and expert GEMM in K chunks, pipelined (MegaScale-MoE)
};

enum class ExpertSwap : std::uint8_t {
  kNone,
  kPerStep,  // after each iteration, a hot and a cold expert swap GPUs inside a server
};

struct OverlapSpec {
  Overlap mode = Overlap::kNone;
  std::uint32_t chunks = 1;    // overlap_chunks, with kChunked
  std::uint32_t comm_sms = 0;  // SMs the communication kernels take while they overlap compute
  ExpertSwap expert_swap = ExpertSwap::kNone;
  /// Optimizer state moved with a swapped expert, in bytes per parameter
  /// (0: the weights only; mixed-precision Adam: 12), sharded over the
  /// expert-data-parallel group as the distributed optimizer shards it.
  std::uint64_t swap_state_bytes = 0;

  /// Duration factor of a compute task that overlaps communication:
  /// gpu_sms / (gpu_sms - comm_sms); 1 without comm_sms.
  double slowdown(std::uint32_t gpu_sms) const {
    return comm_sms == 0 ? 1.0
                         : static_cast<double>(gpu_sms) / static_cast<double>(gpu_sms - comm_sms);
  }
};

/// Reads the keys: overlap, overlap_chunks and comm_sms from `schedule`,
/// gpu_sms from `gpu`, expert_swap and expert_swap_state_bytes from `moe` (all three the same table
/// in a run config's [job]). An Error names the table and key.
void read_overlap(config::ConfigFile& c, std::string_view schedule, std::string_view gpu,
                  std::string_view moe, JobSpec& job);

/// Checks the keys against the job's model, parallelism and schedule; an
/// Error (prefixed by `where`) names the key and the combination.
void check_overlap(const JobSpec& job, const std::string& where);

std::string_view overlap_name(Overlap mode);

}  // namespace shoal::work
