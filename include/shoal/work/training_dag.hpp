// The coflow DAG of a training job, for every GPU (docs/training.md): 1F1B
// pipeline schedule, per layer forward and backward compute, the EP dispatch
// and combine all-to-alls of every MoE layer in both passes, PP sends between
// stages, TP all-reduces inside the TP group, and data parallelism: gradient
// reduce-scatters in buckets (in the last micro-batch's backward, or in
// every one's), the gradient-norm all-reduce, the optimizer step, and the
// parameter all-gathers that the next iteration's forward waits on.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "shoal/work/dag.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::work {

/// The axes of a placement order ("tp-ep-dp-pp": innermost first) as indices
/// 0 tp, 1 ep, 2 dp (expert-data-parallel), 3 pp, 4 cp (inserted directly
/// inside ep when the order omits it); an Error names a bad order, or one
/// that splits cp, ep and dp while both cp and ep exceed 1.
std::array<int, 5> placement_axes(const std::string& order, std::uint32_t cp = 1,
                                  std::uint32_t ep = 1);

/// Context parallelism's K and V block of one CP rank in one layer and
/// micro-batch: tokens / cp x kv_heads x head_dim x 2 x dtype_bytes.
Bytes cp_block_bytes(const JobSpec& job);
/// One GPU's bytes in one of Ulysses' all-to-alls: of Q, K and V (`qkv`:
/// forward before the attention, backward after it) or of the attention's
/// output (or its gradient): tokens / (cp x tp) x width x dtype_bytes x
/// (tp - 1) / tp; 0 without Ulysses.
Bytes ulysses_bytes(const JobSpec& job, bool qkv);

/// Adds the job's tasks and coflows to `dag` (call Dag::resolve() after all jobs).
void add_training_job(const JobSpec& job, Dag& dag);

/// Per GPU per iteration (mean over the job's GPUs), by type: bytes over the
/// network and over NVLink (GPUs of one server of `gpus_per_server`), and
/// coflow counts; plus the closed-form sizes.
JobTraffic job_traffic(const JobSpec& job, const Dag& dag, std::uint32_t gpus_per_server);

/// Bytes from one EP member to each other member in one forward dispatch
/// counted per expert copy, before skew.
Bytes ep_pair_bytes(const JobSpec& job);
/// Bytes of one token in an EP transfer: hidden x dtype, plus with FP8
/// (dtype 1) one fp32 scale per 128 values (DeepSeek-V3's fine-grained
/// quantization, its report section 3.3).
std::uint64_t ep_token_bytes(const JobSpec& job, EpTransfer transfer);
/// "ep_dedup per-node", or "ep_dedup auto (node-limited relay)", for `shoal traffic`.
std::string describe_ep_dedup(const JobSpec& job);
/// The chance that a token's top_k experts, drawn uniformly without
/// replacement from `pool` experts, include one of `held` given experts.
double ep_hit(double pool, double held, std::uint64_t top_k);
/// The EP destination weights (mean 1) for members 0..ep-1 under the job's skew.
std::vector<double> ep_weights(const JobSpec& job);

}  // namespace shoal::work
