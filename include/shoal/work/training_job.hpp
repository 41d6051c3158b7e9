// A training job: a model, how it is parallelized, and the GPU it runs on;
// the formulas for its compute time and its traffic (docs/training.md).
//
// Parallelism follows Megatron: GPUs = TP x CP x PP x DP; EP divides CP x DP (experts
// are sharded over EP ranks inside the data-parallel group); dense parameters
// replicate over the DP group (size DP), expert parameters over the
// expert-data-parallel group (size DP / EP). Placement order "tp-ep-dp-pp"
// (TP innermost, then EP, then the rest of DP, then PP): job rank
// r = tp + TP * (ep + EP * (edp + (DP / EP) * pp)).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/core/units.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/overlap_spec.hpp"
#include "shoal/work/pipeline_schedule.hpp"
#include "shoal/work/sequence_lengths.hpp"

namespace shoal::work {

struct ModelSpec {
  std::string name;
  std::uint32_t layers = 0;
  std::uint64_t hidden = 0;
  std::uint64_t heads = 0;
  std::uint64_t kv_heads = 0;  // 0: = heads
  std::uint64_t ffn = 0;       // dense FFN width (dense layers)
  std::uint64_t vocab = 0;
  std::uint64_t sequence = 0;  // tokens per sequence
  bool gated_ffn = true;       // SwiGLU (3 matrices) or GeLU (2)
  std::uint64_t dtype_bytes = 2;
  // MoE (experts = 0: a dense model)
  std::uint64_t experts = 0;
  std::uint64_t top_k = 0;
  std::uint64_t expert_ffn = 0;
  std::uint64_t shared_ffn = 0;    // total width of the shared experts (0: none)
  std::uint32_t dense_layers = 0;  // the first k layers are dense
  std::uint32_t node_limit =
      0;  // DeepSeek's node-limited routing: at most M servers per token (0: off)
  /// A causal mask: each query attends to the keys before it, half the
  /// query-key pairs of a full mask (FlashAttention's count).
  bool causal = false;

  bool moe_layer(std::uint32_t layer) const { return experts > 0 && layer >= dense_layers; }
  std::uint64_t ffn_matrices() const { return gated_ffn ? 3 : 2; }
  /// Parameters of one layer (before any sharding): attention, and the FFN part.
  std::uint64_t attention_params() const;
  std::uint64_t dense_ffn_params() const { return ffn_matrices() * hidden * ffn; }
  std::uint64_t expert_params() const {
    return ffn_matrices() * hidden * expert_ffn;
  }  // one expert
  std::uint64_t shared_params() const {
    return ffn_matrices() * hidden * shared_ffn + hidden * experts;
  }
};

/// Sequence parallelism inside the TP group (docs/training.md).
enum class SpMode : std::uint8_t {
  kNone,     // Megatron's TP: two all-reduces per layer and pass
  kUlysses,  // DeepSpeed-Ulysses in the attention: all-to-alls of heads around it
};

struct ParallelSpec {
  std::uint32_t tp = 1, pp = 1, ep = 1, dp = 0;  // dp 0: GPUs / (tp * cp * pp)
  /// Context parallelism: each sequence's tokens split over cp ranks, ring
  /// attention passing K and V blocks around them. EP divides cp x dp.
  std::uint32_t cp = 1;
  /// Ring attention's steps overlap the attention of blocks already received
  /// (Transformer Engine); false: the ring completes before the attention.
  bool cp_overlap = true;
  SpMode sp = SpMode::kNone;
  std::uint32_t micro_batches = 1;
  std::uint64_t micro_batch_tokens = 0;  // tokens per micro-batch per data-parallel replica
  std::uint32_t iterations = 1;
  std::uint32_t first_gpu = 0;  // the job's GPUs: [first_gpu, first_gpu + gpus)
  std::uint32_t gpus = 0;       // 0: tp * pp * dp, or the rest of the fabric
  std::string order = "tp-ep-dp-pp";
  /// "ring": one ring over the DP group; "hierarchical": a ring inside each
  /// server (NVLink), then rings across servers between GPUs of the same local index.
  std::string dp_algorithm = "ring";
  std::uint32_t gpus_per_server = 8;  // the fabric's (set by resolve)
  /// Warm-up forwards beyond 1F1B's PP - s - 1 on every stage but the last (PipeMorph).
  std::uint32_t extra_warmup = 0;
};

struct GpuSpec {
  std::string type = "H100";
  double peak_tflops = 989.0;  // dense BF16 tensor (H100/H800 SXM); A100: 312
  double efficiency = 0.39;    // DeepSeek-V3's measured MFU on H800 (38.9%)
  double backward_factor = 2.0;
  std::uint32_t sms = 132;  // gpu_sms: streaming multiprocessors (H100/H800 SXM 132, A100 108)
  Time optimizer = 0;       // the optimizer step per iteration
  /// Measured forward time of each layer for one micro-batch on one GPU (empty:
  /// from FLOPs), split between attention and FFN in their FLOP proportion.
  std::vector<Time> layer_forward;
};

/// When a data-parallel group reduces its gradients (docs/training.md).
enum class DpReduce : std::uint8_t {
  kLastMicroBatch,   // Megatron's distributed optimizer: in the last micro-batch's backward
  kEveryMicroBatch,  // DeepSpeed ZeRO-2 with gradient accumulation: in every one's backward
};

/// How the framework runs a training step: when and how gradients are
/// reduced, the step's synchronization and the pipeline schedule (the
/// [schedule] table). The defaults are Megatron-LM's for a bf16 model with
/// the distributed optimizer and --overlap-grad-reduce.
struct ScheduleSpec {
  DpReduce dp_reduce = DpReduce::kLastMicroBatch;
  /// How gradients are grouped into reduce-scatters, in backward order.
  enum class Bucket : std::uint8_t {
    kMegatron,   // max(40 M, 1 M x DP) parameters on the first stage, one per buffer elsewhere
    kDeepSpeed,  // 5e8 parameters (reduce_bucket_size)
    kLayer,      // one per layer
    kBuffer,     // one per gradient buffer (dense, experts) and stage
    kParameters  // dp_bucket_parameters each
  };
  Bucket dp_bucket = Bucket::kMegatron;
  std::uint64_t dp_bucket_parameters = 0;     // with kParameters: given as parameters
  std::uint64_t dp_bucket_bytes = 0;          // ... or as bytes of reduced gradients
  std::uint64_t grad_reduce_dtype_bytes = 4;  // fp32: Megatron-LM's default for bf16 models
  bool grad_norm_barrier = true;  // the gradient-norm all-reduce before the optimizer step
  PpSchedule pp_schedule = PpSchedule::k1F1B;
  std::uint32_t virtual_stages = 1;  // interleaved: model chunks per pipeline rank
  /// Layers of each (virtual) stage in order, pp x virtual_stages of them;
  /// empty: the layers split evenly.
  std::vector<std::uint32_t> stage_layers;
  /// DualPipe: the share of a backward that computes weight gradients (W),
  /// which a zero-bubble backward leaves for later.
  double weight_grad_share = 0.5;
};

/// How the EP all-to-all counts a token routed to several experts
/// (docs/training.md, "Expert parallelism on the wire").
enum class EpDedup : std::uint8_t {
  kAuto,       // per-expert; with node_limit, the node-limited relay (network per server,
               // NVLink forwards per expert copy)
  kPerExpert,  // one copy per expert, sent directly (Megatron's all-to-all)
  kPerGpu,     // one copy per destination GPU, sent directly
  kPerNode,    // one network copy per destination server, to the same-index GPU, then
               // one NVLink forward per destination GPU (DeepEP internode)
};

/// The EP transfers of one MoE layer, by direction and pass.
enum class EpTransfer : std::uint8_t {
  kDispatch,          // forward, tokens to their experts
  kCombine,           // forward, expert outputs back
  kBackwardDispatch,  // backward, output gradients to the experts
  kBackwardCombine,   // backward, input gradients back
};

/// Where the experts sit on the EP members (docs/training.md).
enum class ExpertPlacement : std::uint8_t {
  kInOrder,     // expert e on member e x EP / experts: Megatron's contiguous local experts
  kRoundRobin,  // expert e on member e mod EP
  kNicAware,    // balance the routing file's load per member, hence per NIC
};

/// The EP all-to-all on the wire: each transfer's dtype in bytes (0: the
/// model's dtype_bytes; 1 is FP8 with one fp32 scale per 128 values of a
/// token), and how copies are counted.
struct EpCommSpec {
  std::uint64_t dtype_bytes[4] = {0, 0, 0, 0};  // by EpTransfer
  EpDedup dedup = EpDedup::kAuto;
  ExpertPlacement placement = ExpertPlacement::kInOrder;
};

/// Expert-load skew of the EP all-to-all: uniform, one hot member per group
/// receiving `hot_ratio` times the mean, or Zipf weights over the members.
/// Static: member 0 is the hottest everywhere. Drift: which member gets which
/// weight is drawn anew for every iteration, MoE layer, micro-batch and EP
/// group, from `seed` (the same on every rank).
struct SkewSpec {
  double hot_ratio = 1.0;
  double zipf = 0.0;
  bool drift = false;
  std::uint64_t seed = 1;
  /// A routing file (work/routing_file.hpp) replaces the law: as the config
  /// spells it, the folder it is relative to, and the file found (set by the
  /// run config's reader, which records it among the run's inputs).
  std::string routing_name;
  std::string routing_base;
  std::string routing_file;
};

struct JobSpec {
  std::string file;  // where it was read from (for messages)
  std::uint32_t id = 0;
  ModelSpec model;
  ParallelSpec parallel;
  GpuSpec gpu;
  SkewSpec skew;
  ScheduleSpec schedule;
  EpCommSpec ep_comm;
  SequenceSpec sequences;
  OverlapSpec overlap;

  std::uint32_t gpu_count() const { return parallel.tp * parallel.cp * parallel.pp * parallel.dp; }
  /// The job as one CP rank sees it: micro_batch_tokens / cp tokens and cp x dp
  /// data-parallel ranks (which reduce the gradients together, and over which
  /// EP folds, as in Megatron-Core); cp 1. The job itself when cp is 1.
  JobSpec rank_view() const;
  /// Pipeline stages the model is cut into: pp x virtual_stages.
  std::uint32_t stages() const { return parallel.pp * schedule.virtual_stages; }
  /// The first layer of each stage, and the layer count after the last.
  std::vector<std::uint32_t> stage_starts() const;
  /// Checks the factoring against a fabric of `fabric_gpus` GPUs (fills dp and
  /// gpus when 0); an Error names the file and the mismatch.
  void resolve(std::uint32_t fabric_gpus, std::uint32_t gpus_per_server = 8);

 private:
  /// The pipeline schedule's keys against the model and parallelism.
  void resolve_pipeline(const std::string& where) const;
  /// Heads against Ulysses' degree.
  void resolve_sequences(const std::string& where) const;
};

/// Bytes one GPU sends per iteration, by traffic type, and coflow counts.
struct JobTraffic {
  Bytes ep_dispatch_per_gpu = 0;  // one forward dispatch, mean per GPU (network and NVLink)
  Bytes pp_per_send = 0;          // one activation (or gradient) send between stages
  Bytes tp_per_layer_pass = 0;    // one GPU's TP all-reduce bytes per layer and pass
  // Data parallelism per GPU per iteration: reduce-scatter bytes (every
  // micro-batch's where every micro-batch reduces, in grad_reduce_dtype_bytes)
  // and all-gather bytes (the parameters, in the model's dtype).
  Bytes dp_reduce_dense_per_gpu = 0;
  Bytes dp_reduce_expert_per_gpu = 0;
  Bytes dp_gather_dense_per_gpu = 0;
  Bytes dp_gather_expert_per_gpu = 0;
  std::uint64_t dp_reductions = 0;  // reduce-scatter coflows per iteration (buckets x reductions)
  // per GPU per iteration, network vs NVLink, by type (index CoflowType)
  Bytes cp_per_layer_pass = 0;  // one GPU's ring-attention bytes per layer, forward
  Bytes sp_per_layer_pass = 0;  // one GPU's Ulysses all-to-all bytes per layer and pass
  Bytes network[6] = {0, 0, 0, 0, 0, 0};
  Bytes nvlink[6] = {0, 0, 0, 0, 0, 0};
  std::uint64_t coflows[6] = {0, 0, 0, 0, 0, 0};
};

/// The step's semantics in words, for `shoal traffic`: when and how the
/// gradients are reduced, and whether the gradient norm synchronizes the step.
std::string describe_schedule(const JobSpec& job);

/// Forward compute time of one micro-batch on one GPU: attention (with the
/// shared experts and router in MoE layers) and the FFN or routed experts.
/// `square_sum`: the micro-batch's sum of squared sequence lengths on this
/// GPU's ranks (negative: every sequence `model.sequence` long).
Time attention_time(const JobSpec& job, std::uint32_t layer, double square_sum = -1);
/// The share of attention_time spent in the score and value products (the
/// part ring attention splits over its steps), by FLOPs.
double attention_core_share(const JobSpec& job, std::uint32_t layer, double square_sum = -1);
Time ffn_time(const JobSpec& job, std::uint32_t layer, double expert_load = 1.0);
Time lm_head_time(const JobSpec& job);

}  // namespace shoal::work
