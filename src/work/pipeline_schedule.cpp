#include "shoal/work/pipeline_schedule.hpp"

#include <algorithm>

namespace shoal::work {

namespace {

std::vector<PipelineStep> one_f_one_b(std::uint32_t rank, std::uint32_t ranks,
                                      std::uint32_t micro_batches, std::uint32_t extra_warmup) {
  const std::uint32_t m = micro_batches;
  // PipeMorph's remedy for a slow link: ranks before it run extra warm-up
  // forwards, so each activation is sent earlier than the next rank needs it.
  const std::uint32_t warmup =
      std::min(ranks - rank - 1 + (rank + 1 < ranks ? extra_warmup : 0), m);
  std::vector<PipelineStep> steps;
  for (std::uint32_t i = 0; i < warmup; ++i) steps.push_back({true, 0, i});
  for (std::uint32_t i = 0; i + warmup < m; ++i) {
    steps.push_back({true, 0, warmup + i});
    steps.push_back({false, 0, i});
  }
  for (std::uint32_t i = m - warmup; i < m; ++i) steps.push_back({false, 0, i});
  return steps;
}

/// Megatron's interleaved schedule with micro-batch groups of p (its default
/// depth-first order): virtual micro-batch k runs micro-batch
/// (k / (p·v))·p + k mod p through chunk (k mod p·v) / p going forward, and
/// through chunk v - 1 - that going backward. Rank r warms up with
/// 2(p - r - 1) + (v - 1)·p forwards.
std::vector<PipelineStep> interleaved(std::uint32_t rank, std::uint32_t ranks, std::uint32_t chunks,
                                      std::uint32_t micro_batches) {
  const std::uint32_t p = ranks, v = chunks;
  const std::uint32_t total = micro_batches * v;
  auto step = [&](std::uint32_t k, bool forward) {
    const std::uint32_t in_group = k % (p * v);
    const std::uint32_t chunk = in_group / p;
    return PipelineStep{forward, forward ? chunk : v - 1 - chunk, (k / (p * v)) * p + k % p};
  };
  const std::uint32_t warmup = std::min(2 * (p - rank - 1) + (v - 1) * p, total);
  std::vector<PipelineStep> steps;
  for (std::uint32_t k = 0; k < warmup; ++k) steps.push_back(step(k, true));
  for (std::uint32_t i = 0; i + warmup < total; ++i) {
    steps.push_back(step(warmup + i, true));
    steps.push_back(step(i, false));
  }
  for (std::uint32_t k = total - warmup; k < total; ++k) steps.push_back(step(k, false));
  return steps;
}

}  // namespace

std::vector<PipelineStep> pipeline_steps(PpSchedule schedule, std::uint32_t rank,
                                         std::uint32_t ranks, std::uint32_t chunks,
                                         std::uint32_t micro_batches, std::uint32_t extra_warmup) {
  if (schedule == PpSchedule::kInterleaved) {
    return interleaved(rank, ranks, chunks, micro_batches);
  }
  return one_f_one_b(rank, ranks, micro_batches, extra_warmup);
}

}  // namespace shoal::work
