// The order in which a pipeline rank runs its micro-batches through its model
// chunks, for each schedule Shoal generates (docs/training.md, "Pipelines"):
//   1F1B         warm-up forwards, then one forward and one backward in turn,
//                then the remaining backwards (PipeDream-flush, Megatron's
//                default);
//   interleaved  Megatron's interleaved 1F1B: each rank holds v chunks, chunk
//                c of rank r being virtual stage c·p + r, in groups of p
//                micro-batches (schedules.py, forward_backward_pipelining_
//                with_interleaving).
// Pure: the DAG generator turns each step into tasks and coflows.
#pragma once

#include <cstdint>
#include <vector>

namespace shoal::work {

enum class PpSchedule : std::uint8_t { k1F1B, kInterleaved };

/// One step of a pipeline rank: a micro-batch's forward or backward through
/// one of the rank's model chunks.
struct PipelineStep {
  bool forward = true;
  std::uint32_t chunk = 0;  // the rank's chunk (its virtual stage: chunk_stage)
  std::uint32_t micro_batch = 0;
  friend bool operator==(const PipelineStep&, const PipelineStep&) = default;
};

/// The steps of pipeline rank `rank` of `ranks`, each of its `chunks` model
/// chunks running every one of `micro_batches` forward and backward.
/// `extra_warmup`: warm-up forwards beyond 1F1B's on every rank but the last
/// (PipeMorph's slack; 1F1B only). The interleaved schedule needs the
/// micro-batches to be a multiple of the ranks (checked by the job).
std::vector<PipelineStep> pipeline_steps(PpSchedule schedule, std::uint32_t rank,
                                         std::uint32_t ranks, std::uint32_t chunks,
                                         std::uint32_t micro_batches,
                                         std::uint32_t extra_warmup = 0);

/// The virtual stage of chunk `chunk` on pipeline rank `rank` (c·p + r).
inline std::uint32_t chunk_stage(std::uint32_t rank, std::uint32_t ranks, std::uint32_t chunk) {
  return chunk * ranks + rank;
}

}  // namespace shoal::work
