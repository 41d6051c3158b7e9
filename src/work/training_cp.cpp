// Context parallelism (ring attention) and Ulysses sequence parallelism in a
// training job's DAG, and the packed sequences' attention time
// (docs/training.md, "Context and sequence parallelism").
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "shoal/work/training_dag.hpp"
#include "training_builder.hpp"

namespace shoal::work {
namespace {

std::uint64_t kv_heads(const ModelSpec& m) { return m.kv_heads == 0 ? m.heads : m.kv_heads; }

/// One GPU's K and V block of `tokens` tokens: its TP rank holds kv_heads / TP
/// of the heads (one, replicated, when there are fewer than TP).
Bytes kv_block(const ModelSpec& m, std::uint64_t tokens, std::uint32_t tp) {
  const std::uint64_t heads = std::max<std::uint64_t>(1, kv_heads(m) / tp);
  return static_cast<Bytes>(tokens * heads * (m.hidden / m.heads) * 2 * m.dtype_bytes);
}

/// Bytes from one member of a Ulysses group to each other member: its
/// tokens/TP tokens' share of the heads one member takes (1/TP of the width).
Bytes ulysses_pair(const ModelSpec& m, std::uint64_t tokens, std::uint32_t tp, bool qkv) {
  const std::uint64_t head_dim = m.hidden / m.heads;
  const std::uint64_t width = qkv ? (m.heads + 2 * kv_heads(m)) * head_dim : m.hidden;
  return static_cast<Bytes>(tokens * width * m.dtype_bytes / (std::uint64_t{tp} * tp));
}

}  // namespace

Bytes cp_block_bytes(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  return kv_block(job.model, p.micro_batch_tokens / p.cp, p.tp);
}

Bytes ulysses_bytes(const JobSpec& job, bool qkv) {
  const ParallelSpec& p = job.parallel;
  if (p.sp != SpMode::kUlysses || p.tp < 2) return 0;
  return (p.tp - 1) * ulysses_pair(job.model, p.micro_batch_tokens / p.cp, p.tp, qkv);
}

double TrainingBuilder::square_sum(std::uint32_t r, std::uint32_t mb) const {
  if (!packing_) return -1;
  // The replica's packed sequences, split evenly over its CP ranks.
  const std::uint32_t x = (r / p_.tp) % p_.dp / cp_;
  return packing_->square_sum(iteration_, mb, x) / cp_;
}

Time TrainingBuilder::attention(std::uint32_t r, std::uint32_t mb, std::uint32_t layer) const {
  return attention_time(job_, layer, square_sum(r, mb));
}

Time TrainingBuilder::attention_compute(std::uint32_t r, std::uint32_t mb, std::uint32_t layer,
                                        bool forward) const {
  if (forward) return attention(r, mb, layer);
  return static_cast<Time>(std::llround(static_cast<double>(attention(r, mb, layer)) *
                                        job_.gpu.backward_factor * backward_share_));
}

void TrainingBuilder::attention_pass(std::uint32_t s, std::uint32_t mb, std::uint32_t layer,
                                     bool forward) {
  if (cp_ >= 2 && p_.cp_overlap) {
    overlapped_ring(s, mb, layer, forward);
    return;
  }
  context_ring(s, mb, layer, forward);
  for (std::uint32_t i = 0; i < p_.tp * p_.dp; ++i) {
    const std::uint32_t r = stage_rank(s, i);
    std::vector<std::string> after = std::move(ready(i));
    if (forward && waits_for_parameters(mb)) add_all_gather(after, r, layer, false);
    ready(i) = {task(r, task_name(r, forward, mb, layer, 'a'),
                     attention_compute(r, mb, layer, forward), std::move(after),
                     forward ? TaskKind::kForward : TaskKind::kBackward, mb, layer)};
  }
}

std::vector<std::uint32_t> TrainingBuilder::cp_ring(std::uint32_t s, std::uint32_t t,
                                                    std::uint32_t x, bool forward) const {
  // Transformer Engine sends forward to the next CP rank and backward to the previous one.
  std::vector<std::uint32_t> members(cp_);
  for (std::uint32_t c = 0; c < cp_; ++c) {
    members[forward ? c : cp_ - 1 - c] = stage_rank(s, t + p_.tp * (c + cp_ * x));
  }
  return members;
}

void TrainingBuilder::context_ring(std::uint32_t s, std::uint32_t mb, std::uint32_t layer,
                                   bool forward) {
  if (cp_ < 2) return;
  // The ring without overlap (cp_overlap = false): forward, each rank sends
  // its K and V block on CP - 1 times; backward, the K and V blocks again
  // CP - 1 times and their gradients CP - 1 times, all before the attention.
  const Bytes block = kv_block(m_, p_.micro_batch_tokens, p_.tp);
  const Bytes bytes = (forward ? 1 : 2) * (cp_ - 1) * block;
  const std::string tag = pass_tag(mb, layer, forward) + ".cp";
  for (std::uint32_t t = 0; t < p_.tp; ++t) {
    for (std::uint32_t x = 0; x < p_.dp / cp_; ++x) {
      const std::vector<std::uint32_t> members = cp_ring(s, t, x, forward);
      std::vector<std::string> after;
      for (const std::uint32_t r : members) {
        after.insert(after.end(), ready(local(r, s)).begin(), ready(local(r, s)).end());
      }
      dedupe(after);
      const std::string name = tag + std::to_string(t) + "." + std::to_string(x);
      ring_coflow(name, members, bytes, labels(CoflowType::kCp, mb, layer, s), std::move(after));
      for (const std::uint32_t r : members) ready(local(r, s)) = {name};
    }
  }
}

void TrainingBuilder::overlapped_ring(std::uint32_t s, std::uint32_t mb, std::uint32_t layer,
                                      bool forward) {
  // Transformer Engine's AttnFuncWithCPAndKVP2P in CP steps. Step k computes
  // the attention of the K and V block received in step k - 1 (step 0: its
  // own) while the ring passes a block on (docs/training.md). Forward: the
  // exchange of step k (k < CP - 1) sends the K and V block, after the
  // exchange of step k - 1. Backward: it sends the K and V block (k < CP - 1)
  // and the gradients dK, dV that step k - 1 computed (k > 0), so it also
  // waits for that step's attention. With a causal mask and Transformer
  // Engine's two chunks per rank every step has the same work: the score and
  // value products split evenly, the projections go with step 0.
  const Bytes block = kv_block(m_, p_.micro_batch_tokens, p_.tp);
  const std::uint32_t exchanges = forward ? cp_ - 1 : cp_;
  const std::string tag = pass_tag(mb, layer, forward) + ".cp";
  const CoflowLabels l = labels(CoflowType::kCp, mb, layer, s);
  for (std::uint32_t t = 0; t < p_.tp; ++t) {
    for (std::uint32_t x = 0; x < p_.dp / cp_; ++x) {
      const std::vector<std::uint32_t> members = cp_ring(s, t, x, forward);
      const std::string ring = tag + std::to_string(t) + "." + std::to_string(x) + ".s";
      std::vector<std::string> exchange_after;                // step 0's: the members' ready
      std::vector<std::vector<std::string>> step_after(cp_);  // each member's step 0
      std::vector<Time> whole(cp_), core_step(cp_);
      for (std::uint32_t c = 0; c < cp_; ++c) {
        const std::uint32_t r = members[c];
        const std::uint32_t i = local(r, s);
        exchange_after.insert(exchange_after.end(), ready(i).begin(), ready(i).end());
        step_after[c] = std::move(ready(i));
        if (forward && waits_for_parameters(mb)) add_all_gather(step_after[c], r, layer, false);
        whole[c] = attention_compute(r, mb, layer, forward);
        const double share = attention_core_share(job_, layer, square_sum(r, mb));
        const auto core = static_cast<Time>(std::llround(static_cast<double>(whole[c]) * share));
        core_step[c] = core / cp_;
      }
      dedupe(exchange_after);
      std::vector<std::string> steps(cp_);  // each member's latest step
      std::string exchange;                 // the latest exchange
      for (std::uint32_t k = 0; k < cp_; ++k) {
        const std::string previous_exchange = exchange;
        if (k < exchanges) {
          // Backward: K and V only in the first exchange, dK and dV only in the last.
          const Bytes bytes = (forward || k == 0 || k + 1 == cp_) ? block : 2 * block;
          std::vector<std::string> after =
              k == 0 ? std::move(exchange_after) : std::vector<std::string>{previous_exchange};
          if (k > 0 && !forward) after.insert(after.end(), steps.begin(), steps.end());
          exchange = ring + std::to_string(k);
          ring_coflow(exchange, members, bytes, l, std::move(after));
        }
        for (std::uint32_t c = 0; c < cp_; ++c) {
          const std::uint32_t r = members[c];
          std::string name = task_name(r, forward, mb, layer, 'a');
          if (k + 1 < cp_) name += ".s" + std::to_string(k);
          std::vector<std::string> after =
              k == 0 ? std::move(step_after[c])
                     : std::vector<std::string>{steps[c], previous_exchange};
          const Time duration = k == 0 ? whole[c] - (cp_ - 1) * core_step[c] : core_step[c];
          steps[c] = task(r, std::move(name), duration, std::move(after),
                          forward ? TaskKind::kForward : TaskKind::kBackward, mb, layer);
        }
      }
      for (std::uint32_t c = 0; c < cp_; ++c) {
        ready(local(members[c], s)) = {steps[c]};
        if (!forward) ready(local(members[c], s)).push_back(exchange);
      }
    }
  }
}

void TrainingBuilder::ulysses(std::uint32_t s, std::uint32_t mb, std::uint32_t layer, bool forward,
                              bool before) {
  if (p_.sp != SpMode::kUlysses || p_.tp < 2) return;
  // Forward: Q, K and V from sequence- to head-sharded before the attention,
  // its output back after; backward the other way round (the output's
  // gradient first, then Q's, K's and V's).
  const Bytes pair = ulysses_pair(m_, p_.micro_batch_tokens, p_.tp, before == forward);
  const std::string tag = pass_tag(mb, layer, forward) + ".sp";
  for (std::uint32_t d = 0; d < p_.dp; ++d) {
    flows_.clear();
    std::vector<std::string> after;
    for (std::uint32_t a = 0; a < p_.tp; ++a) {
      const std::uint32_t i = a + p_.tp * d;
      after.insert(after.end(), ready(i).begin(), ready(i).end());
      for (std::uint32_t b = 0; b < p_.tp; ++b) {
        if (a != b)
          flows_.push_back({gpu(stage_rank(s, i)), gpu(stage_rank(s, b + p_.tp * d)), pair});
      }
    }
    dedupe(after);
    const std::string name = tag + std::to_string(d) + (before ? ".in" : ".out");
    dag_.add_coflow(name, labels(CoflowType::kCp, mb, layer, s), 0, flows_, std::move(after));
    for (std::uint32_t a = 0; a < p_.tp; ++a) ready(a + p_.tp * d) = {name};
  }
}

}  // namespace shoal::work
