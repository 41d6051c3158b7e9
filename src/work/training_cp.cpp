// Context parallelism (ring attention) and Ulysses sequence parallelism in a
// training job's DAG, and the packed sequences' attention time
// (docs/training.md, "Context and sequence parallelism").
#include <algorithm>
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

Time TrainingBuilder::attention(std::uint32_t r, std::uint32_t mb, std::uint32_t layer) const {
  if (!packing_) return attention_time(job_, layer);
  // The replica's packed sequences, split evenly over its CP ranks.
  const std::uint32_t x = (r / p_.tp) % p_.dp / cp_;
  return attention_time(job_, layer, packing_->square_sum(iteration_, mb, x) / cp_);
}

void TrainingBuilder::context_ring(std::uint32_t s, std::uint32_t mb, std::uint32_t layer,
                                   bool forward) {
  if (cp_ < 2) return;
  // Transformer Engine's ring (cp_comm_type "p2p"): forward, each rank sends
  // its K and V block on CP - 1 times; backward, the K and V blocks again
  // CP - 1 times and their gradients CP - 1 times.
  const Bytes block = kv_block(m_, p_.micro_batch_tokens, p_.tp);
  const Bytes bytes = (forward ? 1 : 2) * (cp_ - 1) * block;
  const std::string tag = prefix_ + "m" + std::to_string(mb) + ".L" + std::to_string(layer + 1) +
                          (forward ? ".f" : ".b") + ".cp";
  std::vector<std::uint32_t> members(cp_);
  for (std::uint32_t t = 0; t < p_.tp; ++t) {
    for (std::uint32_t x = 0; x < p_.dp / cp_; ++x) {
      std::vector<std::string> after;
      for (std::uint32_t c = 0; c < cp_; ++c) {
        const std::uint32_t i = t + p_.tp * (c + cp_ * x);
        members[c] = stage_rank(s, i);
        after.insert(after.end(), ready(i).begin(), ready(i).end());
      }
      dedupe(after);
      const std::string name = tag + std::to_string(t) + "." + std::to_string(x);
      ring_coflow(name, members, bytes, labels(CoflowType::kCp, mb, layer, s), std::move(after));
      for (const std::uint32_t r : members) ready(local(r, s)) = {name};
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
  const std::string tag = prefix_ + "m" + std::to_string(mb) + ".L" + std::to_string(layer + 1) +
                          (forward ? ".f" : ".b") + ".sp";
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
