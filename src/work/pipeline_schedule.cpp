#include "shoal/work/pipeline_schedule.hpp"

#include <algorithm>
#include <deque>

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
  using K = PipelineStep::Kind;
  for (std::uint32_t i = 0; i < warmup; ++i) steps.push_back({K::kForward, 0, i});
  for (std::uint32_t i = 0; i + warmup < m; ++i) {
    steps.push_back({K::kForward, 0, warmup + i});
    steps.push_back({K::kBackward, 0, i});
  }
  for (std::uint32_t i = m - warmup; i < m; ++i) steps.push_back({K::kBackward, 0, i});
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
    return PipelineStep{forward ? PipelineStep::Kind::kForward : PipelineStep::Kind::kBackward,
                        forward ? chunk : v - 1 - chunk, (k / (p * v)) * p + k % p};
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

/// DualPipe's eight phases, as DualPipe.step runs them. Phases 0 and 1 are
/// the two directions: on the first half of the ranks phase 0 is chunk 0 (the
/// micro-batches entering at rank 0), on the second half chunk 1. A backward
/// with zero bubble computes input gradients only; each weight step then takes
/// the oldest such backward's weight gradients (first in, first out).
class DualPipeSteps {
 public:
  DualPipeSteps(std::uint32_t rank, std::uint32_t ranks, std::uint32_t micro_batches)
      : second_half_(rank >= ranks / 2), half_(micro_batches / 2) {
    const std::uint32_t p = ranks, h = std::min(rank, ranks - 1 - rank), ph = ranks / 2;
    const bool middle = rank == ph - 1 || rank == ph;
    for (std::uint32_t i = 0; i < (ph - h - 1) * 2; ++i) forward(0);  // 1: nF0
    for (std::uint32_t i = 0; i < h + 1; ++i) {                       // 2: nF0F1
      forward(0);
      forward(1);
    }
    for (std::uint32_t i = 0; i < ph - h - 1; ++i) {  // 3: nB1W1F1, zero bubble
      backward(1, true);
      weight();
      forward(1);
    }
    for (std::uint32_t i = 0; i < half_ - p + h + 1; ++i) {  // 4: nF0B1F1B0, the main phase
      if (i == 0 && middle) {
        forward(0);  // the middle ranks' first pair is not overlapped
        backward(1, false);
      } else {
        forward(0, true);
        backward(1, false);
      }
      forward(1, true);
      backward(0, false);
    }
    for (std::uint32_t i = 0; i < ph - h - 1; ++i) {  // 5: nB1F1B0
      backward(1, false);
      forward(1, true);
      backward(0, false);
    }
    bool zero_bubble = false;  // 6: nB1B0, the second half with zero bubble
    for (std::uint32_t i = 0; i < h + 1; ++i) {
      if (i == (h + 1) / 2 && h % 2 == 1) zero_bubble = true;
      backward(1, zero_bubble);
      if (i == (h + 1) / 2 && h % 2 == 0) zero_bubble = true;
      backward(0, zero_bubble);
    }
    for (std::uint32_t i = 0; i < ph - h - 1; ++i) {  // 7: nWB0, zero bubble
      weight();
      backward(0, true);
    }
    for (std::uint32_t i = 0; i < h + 1; ++i) weight();  // 8: nW
  }
  std::vector<PipelineStep> steps;

 private:
  std::uint32_t chunk(std::uint32_t phase) const { return phase ^ (second_half_ ? 1 : 0); }
  std::uint32_t micro_batch(std::uint32_t c, std::uint32_t index) const {
    return c == 0 ? index : half_ + index;
  }
  void forward(std::uint32_t phase, bool with_next = false) {
    const std::uint32_t c = chunk(phase);
    steps.push_back(
        {PipelineStep::Kind::kForward, c, micro_batch(c, forwards_[c]++), false, with_next});
  }
  void backward(std::uint32_t phase, bool zero_bubble) {
    const std::uint32_t c = chunk(phase);
    const PipelineStep step{PipelineStep::Kind::kBackward, c, micro_batch(c, backwards_[c]++),
                            zero_bubble, false};
    steps.push_back(step);
    if (zero_bubble) deferred_.push_back(step);
  }
  void weight() {
    steps.push_back({PipelineStep::Kind::kWeight, deferred_.front().chunk,
                     deferred_.front().micro_batch, false, false});
    deferred_.pop_front();
  }

  bool second_half_;
  std::uint32_t half_;
  std::uint32_t forwards_[2] = {0, 0};
  std::uint32_t backwards_[2] = {0, 0};
  std::deque<PipelineStep> deferred_;
};

}  // namespace

std::vector<PipelineStep> pipeline_steps(PpSchedule schedule, std::uint32_t rank,
                                         std::uint32_t ranks, std::uint32_t chunks,
                                         std::uint32_t micro_batches, std::uint32_t extra_warmup) {
  if (schedule == PpSchedule::kInterleaved) {
    return interleaved(rank, ranks, chunks, micro_batches);
  }
  if (schedule == PpSchedule::kDualPipe) return DualPipeSteps(rank, ranks, micro_batches).steps;
  return one_f_one_b(rank, ranks, micro_batches, extra_warmup);
}

}  // namespace shoal::work
