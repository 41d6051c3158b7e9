// A pipeline rank's schedule in a training job's DAG (docs/training.md,
// "Pipelines"): its steps in order, each a pass of the rank's GPUs through
// one stage, with the PP sends between stages; DualPipe's overlapped
// forward-and-backward pairs and its deferred weight-gradient passes.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "training_builder.hpp"

namespace shoal::work {

void TrainingBuilder::schedule_rank(std::uint32_t r) {
  // Per GPU of the pipeline rank: the last task in its schedule (the chain).
  const std::uint32_t n = p_.tp * p_.dp;
  last_.assign(n, {});
  if (iteration_ > 0) {
    for (std::uint32_t i = 0; i < n; ++i) {
      last_[i] = {optimizer_[stage_rank(r, i)]};  // the previous iteration's
    }
  }
  const ScheduleSpec& sch = job_.schedule;
  // Two-batch overlap schedules pairs of micro-batches as one: step k's
  // micro-batch is the pair (2k, 2k + 1).
  const bool dual = job_.overlap.mode == Overlap::kDualMicroBatch;
  const std::vector<PipelineStep> steps =
      pipeline_steps(sch.pp_schedule, r, p_.pp, sch.virtual_stages,
                     dual ? p_.micro_batches / 2 : p_.micro_batches, p_.extra_warmup);
  // The step that makes each chunk's gradients final: its last backward, or
  // the weight step of its last split one.
  std::map<std::uint32_t, std::size_t> final_step;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const PipelineStep& s = steps[k];
    if (s.kind == PipelineStep::Kind::kWeight ||
        (s.kind == PipelineStep::Kind::kBackward && !s.split)) {
      final_step[s.chunk] = k;
    }
  }
  const bool every = sch.dp_reduce == DpReduce::kEveryMicroBatch;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const PipelineStep& step = steps[k];
    const std::uint32_t vs = chunk_stage(sch.pp_schedule, r, p_.pp, step.chunk);
    const bool final = final_step.at(step.chunk) == k;
    if (final) final_mb_[{r, vs}] = dual ? 2 * step.micro_batch + 1 : step.micro_batch;
    if (step.with_next) {
      const PipelineStep& other = steps[++k];
      const std::uint32_t other_vs = chunk_stage(sch.pp_schedule, r, p_.pp, other.chunk);
      const bool other_final = final_step.at(other.chunk) == k;
      if (other_final) final_mb_[{r, other_vs}] = other.micro_batch;
      overlapped(r, step, vs, other, other_vs, every || other_final);
      continue;
    }
    switch (step.kind) {
      case PipelineStep::Kind::kForward:
        if (dual) {
          paired(r, vs, step.micro_batch, true);
        } else {
          forward_pass(r, vs, step.micro_batch);
        }
        break;
      case PipelineStep::Kind::kBackward:
        recording_grads_ = !step.split && (every || final);
        backward_share_ = step.split ? 1.0 - sch.weight_grad_share : 1.0;
        if (dual) {
          paired(r, vs, step.micro_batch, false);
        } else {
          backward_pass(r, vs, step.micro_batch);
        }
        recording_grads_ = false;
        backward_share_ = 1.0;
        break;
      case PipelineStep::Kind::kWeight:
        weight_pass(r, vs, step.micro_batch, every || final);
        break;
    }
  }
}

void TrainingBuilder::overlapped(std::uint32_t r, const PipelineStep& forward, std::uint32_t f_vs,
                                 const PipelineStep& backward, std::uint32_t b_vs, bool record) {
  // DualPipe waits for both steps' inputs before computing either, then runs
  // them side by side (a GPU computes one task at a time, so one step's
  // compute fills the other's all-to-alls), and sends both steps' outputs.
  const std::uint32_t n = p_.tp * p_.dp;
  const std::uint32_t stages = job_.stages();
  for (std::uint32_t i = 0; i < n; ++i) {
    if (f_vs > 0) ready(i).push_back(pp_name(forward.micro_batch, f_vs - 1, true, i));
    if (b_vs + 1 < stages) ready(i).push_back(pp_name(backward.micro_batch, b_vs + 1, false, i));
  }
  const std::vector<std::vector<std::string>> inputs = last_;
  overlapping_ = true;  // each pass's compute may run beside the other's all-to-alls
  forward_pass(r, f_vs, forward.micro_batch, false, false);
  const std::vector<std::vector<std::string>> forward_end = std::move(last_);
  last_ = inputs;
  recording_grads_ = record;
  backward_pass(r, b_vs, backward.micro_batch, false, false);
  recording_grads_ = false;
  overlapping_ = false;
  for (std::uint32_t i = 0; i < n; ++i) {
    ready(i).insert(ready(i).end(), forward_end[i].begin(), forward_end[i].end());
  }
  if (f_vs + 1 < stages) send_pp(f_vs, f_vs + 1, forward.micro_batch, true);
  if (b_vs > 0) send_pp(b_vs, b_vs - 1, backward.micro_batch, false);
}

void TrainingBuilder::weight_pass(std::uint32_t s, std::uint32_t vs, std::uint32_t mb,
                                  bool record) {
  // The weight gradients of a split backward, layer by layer in backward
  // order: their share of each layer's backward compute, no communication.
  const std::uint32_t n = p_.tp * p_.dp;
  const double share = job_.gpu.backward_factor * job_.schedule.weight_grad_share;
  for (std::uint32_t layer = stage_starts_[vs + 1]; layer-- > stage_starts_[vs];) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t r = stage_rank(s, i);
      Time t = attention(r, mb, layer) +
               ffn_time(job_, layer,
                        m_.moe_layer(layer) ? weights(layer, mb, edp_of(r))[ep_of(r)] : 1.0);
      if (layer + 1 == m_.layers) t += lm_head_time(job_);
      std::string w = task(r, task_name(r, false, mb, layer, 'w'),
                           static_cast<Time>(std::llround(static_cast<double>(t) * share)),
                           std::move(ready(i)), TaskKind::kBackward, mb, layer);
      ready(i) = {w};
      if (record) {
        dense_grads_.set(grad_key(layer, r, mb), ready(i));
        if (m_.moe_layer(layer)) expert_grads_.set(grad_key(layer, r, mb), ready(i));
      }
    }
  }
}

void TrainingBuilder::send_pp(std::uint32_t from, std::uint32_t to, std::uint32_t mb,
                              bool forward) {
  const PpSchedule schedule = job_.schedule.pp_schedule;
  const std::uint32_t sender = stage_rank_of(schedule, from, p_.pp, mb, p_.micro_batches);
  const std::uint32_t receiver = stage_rank_of(schedule, to, p_.pp, mb, p_.micro_batches);
  const auto bytes = static_cast<Bytes>(p_.micro_batch_tokens * m_.hidden * m_.dtype_bytes / p_.tp);
  // Labelled with the first layer of the stage the activations enter (forward)
  // or the gradients leave (backward).
  const std::uint32_t layer = forward ? stage_starts_[to] : stage_starts_[from];
  for (std::uint32_t d = 0; d < p_.dp; ++d) {
    flows_.clear();
    std::vector<std::string> after;
    for (std::uint32_t t = 0; t < p_.tp; ++t) {
      const std::uint32_t i = t + p_.tp * d;
      flows_.push_back({gpu(stage_rank(sender, i)), gpu(stage_rank(receiver, i)), bytes});
      after.insert(after.end(), ready(i).begin(), ready(i).end());
    }
    dedupe(after);
    dag_.add_coflow(pp_name(mb, from, forward, p_.tp * d),
                    labels(CoflowType::kPp, mb, layer, sender), 0, flows_, std::move(after));
  }
}

}  // namespace shoal::work
