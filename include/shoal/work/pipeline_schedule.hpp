// The order in which a pipeline rank runs its micro-batches through its model
// chunks, for each schedule Shoal generates (docs/training.md, "Pipelines"):
//   1F1B         warm-up forwards, then one forward and one backward in turn,
//                then the remaining backwards (PipeDream-flush, Megatron's
//                default);
//   interleaved  Megatron's interleaved 1F1B: each rank holds v chunks, chunk
//                c of rank r being virtual stage c·p + r, in groups of p
//                micro-batches (schedules.py, forward_backward_pipelining_
//                with_interleaving);
//   dualpipe     DeepSeek's DualPipe: micro-batches fed from both ends, each
//                rank holding two mirrored stages (chunk 0: stage r for the
//                first half of the micro-batches, chunk 1: stage p - 1 - r
//                for the second half), forward and backward chunks paired to
//                overlap, weight gradients deferred (dualpipe.py, DualPipe.step).
// Pure: the DAG generator turns each step into tasks and coflows.
#pragma once

#include <cstdint>
#include <vector>

namespace shoal::work {

enum class PpSchedule : std::uint8_t { k1F1B, kInterleaved, kDualPipe };

/// One step of a pipeline rank: a micro-batch's forward, backward, or
/// deferred weight-gradient pass through one of the rank's model chunks.
struct PipelineStep {
  enum class Kind : std::uint8_t { kForward, kBackward, kWeight };
  Kind kind = Kind::kForward;
  std::uint32_t chunk = 0;  // the rank's chunk
  std::uint32_t micro_batch = 0;
  bool split = false;      // a backward of input gradients only: its weights come in a kWeight step
  bool with_next = false;  // overlapped with the next step (DualPipe's forward-and-backward pair)
  bool forward() const { return kind == Kind::kForward; }
  friend bool operator==(const PipelineStep&, const PipelineStep&) = default;
};

/// The steps of pipeline rank `rank` of `ranks`, each of its `chunks` model
/// chunks running every one of `micro_batches` forward and backward (with
/// DualPipe each of its two chunks runs half of them). `extra_warmup`:
/// warm-up forwards beyond 1F1B's on every rank but the last (PipeMorph's
/// slack; 1F1B only). The interleaved schedule needs the micro-batches to be
/// a multiple of the ranks; DualPipe an even number of ranks and an even
/// number of at least twice as many micro-batches (checked by the job).
std::vector<PipelineStep> pipeline_steps(PpSchedule schedule, std::uint32_t rank,
                                         std::uint32_t ranks, std::uint32_t chunks,
                                         std::uint32_t micro_batches,
                                         std::uint32_t extra_warmup = 0);

/// The stage of the model that chunk `chunk` of pipeline rank `rank` holds:
/// c·p + r (1F1B, interleaved); r or p - 1 - r (DualPipe).
inline std::uint32_t chunk_stage(PpSchedule schedule, std::uint32_t rank, std::uint32_t ranks,
                                 std::uint32_t chunk) {
  if (schedule == PpSchedule::kDualPipe) return chunk == 0 ? rank : ranks - 1 - rank;
  return chunk * ranks + rank;
}

/// The pipeline rank that runs stage `stage` for micro-batch `micro_batch`:
/// s mod p; with DualPipe the first half of the micro-batches enter at rank 0,
/// the second half at rank p - 1 (stage s on rank p - 1 - s).
inline std::uint32_t stage_rank_of(PpSchedule schedule, std::uint32_t stage, std::uint32_t ranks,
                                   std::uint32_t micro_batch, std::uint32_t micro_batches) {
  if (schedule == PpSchedule::kDualPipe) {
    return micro_batch < micro_batches / 2 ? stage : ranks - 1 - stage;
  }
  return stage % ranks;
}

}  // namespace shoal::work
