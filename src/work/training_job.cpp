#include "shoal/work/training_job.hpp"

#include <algorithm>
#include <cmath>

#include "shoal/core/error.hpp"
#include "shoal/work/training_dag.hpp"

namespace shoal::work {

namespace {

/// Bytes and times are 64-bit integers: a job whose single transfers or
/// tasks would pass them is refused before any product is formed, in long
/// double, with generous bounds (the widest dtype, every expert active, one
/// GPU computing a whole layer). What a whole run adds up is checked where it
/// is summed (Dag::add_bytes, Model::check_outcome).
void check_magnitudes(const JobSpec& job, const std::string& where) {
  using Wide = long double;
  constexpr Wide kLimit = 4.6e18L;  // 2^62: twice this still fits in a signed 64-bit value
  const ModelSpec& m = job.model;
  const ParallelSpec& p = job.parallel;
  Wide dtype =
      std::max<Wide>({Wide(m.dtype_bytes), 4.0L, Wide(job.schedule.grad_reduce_dtype_bytes)});
  for (const std::uint64_t d : job.ep_comm.dtype_bytes) dtype = std::max(dtype, Wide(d));
  const Wide hidden = m.hidden, tokens = p.micro_batch_tokens;
  const Wide ffn_width =
      std::max<Wide>(m.ffn, Wide(m.shared_ffn) + Wide(m.experts) * Wide(m.expert_ffn));
  const Wide layer_params = 4 * hidden * hidden + 3 * hidden * ffn_width + hidden * m.experts;
  const Wide params = Wide(m.layers) * layer_params + 2 * hidden * Wide(m.vocab);
  // A coflow's bytes: at most each GPU of a group (EP, TP or a CP ring)
  // sending a micro-batch's activations to each of its experts, or the
  // model's gradients around a ring.
  const Wide group = std::max<Wide>({Wide(p.ep), Wide(p.tp), Wide(p.cp), 2});
  const Wide activations = tokens * hidden * dtype * std::max<Wide>(m.top_k, 1);
  if (!(group * activations <= kLimit) || !(2 * params * dtype <= kLimit)) {
    throw Error(where + "a transfer of this job passes what 64 bits hold (2^62 bytes): check " +
                "model.hidden, ffn, expert_ffn, experts, vocab, layers, dtype_bytes and " +
                "parallelism.micro_batch_tokens");
  }
  // A layer's compute for one micro-batch: six FLOPs a parameter and token,
  // the attention's query-key pairs, and the LM head.
  const Wide flops = 6 * tokens * (layer_params + 2 * hidden * Wide(m.vocab)) +
                     12 * tokens * Wide(m.sequence) * hidden;
  const Wide rate = Wide(job.gpu.peak_tflops) * 1e12L * Wide(job.gpu.efficiency);
  const Wide picoseconds = flops / rate * 1e12L * (1 + Wide(job.gpu.backward_factor));
  if (!(picoseconds <= kLimit)) {
    throw Error(where + "a layer's compute would take " +
                format_time(static_cast<Time>(std::min(picoseconds, 9e18L))) +
                ", past what simulated time holds (2^62 ps, about 53 days): check model.hidden, " +
                "ffn, expert_ffn, sequence and parallelism.micro_batch_tokens");
  }
}

}  // namespace

std::uint64_t ModelSpec::attention_params() const {
  const std::uint64_t kv = kv_heads == 0 ? heads : kv_heads;
  const std::uint64_t head_dim = hidden / heads;
  return hidden * (hidden + 2 * kv * head_dim) + hidden * hidden;  // Q, K, V; output
}

void JobSpec::resolve(std::uint32_t fabric_gpus, std::uint32_t gpus_per_server) {
  const std::string where = "job " + file + ": ";
  const ModelSpec& m = model;
  ParallelSpec& p = parallel;
  if (m.layers == 0 || m.hidden == 0 || m.heads == 0 || m.sequence == 0) {
    throw Error(where + "model.layers, hidden, heads and sequence must be positive");
  }
  if (ep_comm.placement != ExpertPlacement::kInOrder && skew.routing_name.empty()) {
    throw Error(where +
                "moe.expert_placement needs each expert's load: give a routing file "
                "([skew] routing_file); the hot_ratio and zipf laws weigh EP members, not experts");
  }
  if (m.hidden % m.heads != 0) {
    throw Error(where + "model.hidden (" + std::to_string(m.hidden) + ") must divide by heads (" +
                std::to_string(m.heads) + ")");
  }
  if (m.experts > 0 && (m.top_k == 0 || m.top_k > m.experts || m.expert_ffn == 0)) {
    throw Error(where + "model.moe: top_k must be between 1 and experts, expert_ffn positive");
  }
  if (m.experts == 0 && m.ffn == 0) {
    throw Error(where + "model.ffn must be positive in a dense model (moe.experts = 0)");
  }
  if (m.dense_layers > m.layers) throw Error(where + "model.moe.dense_layers exceeds layers");
  if (m.dense_layers > 0 && m.ffn == 0) {
    throw Error(where + "model.ffn must be positive for the dense layers");
  }
  if (p.tp == 0 || p.pp == 0 || p.ep == 0 || p.cp == 0)
    throw Error(where + "parallelism.tp, pp, ep, cp must be positive");
  if (p.micro_batches == 0 || p.micro_batch_tokens == 0 || p.iterations == 0) {
    throw Error(where +
                "parallelism.micro_batches, micro_batch_tokens and iterations must be positive");
  }
  p.gpus_per_server = gpus_per_server;
  if (p.dp_algorithm != "ring" && p.dp_algorithm != "hierarchical") {
    throw Error(where + "parallelism.dp_algorithm \"" + p.dp_algorithm +
                "\" is unknown (ring or hierarchical)");
  }
  try {
    placement_axes(p.order, p.cp, p.ep);
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
  resolve_pipeline(where);
  check_overlap(*this, where);
  if (p.first_gpu >= fabric_gpus) {
    throw Error(where + "parallelism.first_gpu " + std::to_string(p.first_gpu) +
                " is outside the fabric (" + std::to_string(fabric_gpus) + " GPUs)");
  }
  if (p.gpus == 0) p.gpus = p.dp == 0 ? fabric_gpus - p.first_gpu : p.tp * p.cp * p.pp * p.dp;
  if (p.cp == 1) {
    if (p.gpus % (p.tp * p.pp) != 0) {
      throw Error(where + std::to_string(p.gpus) + " GPUs do not factor as tp (" +
                  std::to_string(p.tp) + ") x pp (" + std::to_string(p.pp) + ") x dp");
    }
  } else if (p.gpus % (p.tp * p.cp * p.pp) != 0) {
    throw Error(where + std::to_string(p.gpus) + " GPUs do not factor as tp (" +
                std::to_string(p.tp) + ") x cp (" + std::to_string(p.cp) + ") x pp (" +
                std::to_string(p.pp) + ") x dp");
  }
  const std::uint32_t dp = p.gpus / (p.tp * p.cp * p.pp);
  if (p.dp != 0 && p.dp != dp) {
    if (p.cp == 1) {
      throw Error(where + "tp x pp x dp = " + std::to_string(p.tp) + " x " + std::to_string(p.pp) +
                  " x " + std::to_string(p.dp) + " = " + std::to_string(p.tp * p.pp * p.dp) +
                  " GPUs, but the job has " + std::to_string(p.gpus));
    }
    throw Error(where + "tp x cp x pp x dp = " + std::to_string(p.tp) + " x " +
                std::to_string(p.cp) + " x " + std::to_string(p.pp) + " x " + std::to_string(p.dp) +
                " = " + std::to_string(p.tp * p.cp * p.pp * p.dp) + " GPUs, but the job has " +
                std::to_string(p.gpus));
  }
  p.dp = dp;
  if (m.experts == 0 && p.ep != 1)
    throw Error(where + "parallelism.ep must be 1 for a dense model");
  if (p.cp == 1 && dp % p.ep != 0) {
    throw Error(where + "parallelism.ep (" + std::to_string(p.ep) + ") must divide dp (" +
                std::to_string(dp) + ")");
  }
  if (p.cp > 1 && (dp * p.cp) % p.ep != 0) {
    throw Error(where + "parallelism.ep (" + std::to_string(p.ep) + ") must divide cp x dp (" +
                std::to_string(p.cp) + " x " + std::to_string(dp) + ")");
  }
  resolve_sequences(where);
  if (m.experts > 0 && p.ep > m.experts) {
    throw Error(where + "parallelism.ep (" + std::to_string(p.ep) + ") exceeds the experts (" +
                std::to_string(m.experts) + ")");
  }
  if (p.micro_batch_tokens % p.cp != 0) {
    throw Error(where + "parallelism.micro_batch_tokens (" + std::to_string(p.micro_batch_tokens) +
                ") must divide by cp (" + std::to_string(p.cp) +
                "): each CP rank holds an equal share");
  }
  if ((p.micro_batch_tokens / p.cp) % p.tp != 0) {
    throw Error(where + (p.cp == 1 ? std::string("parallelism.micro_batch_tokens must divide by tp")
                                   : "parallelism.micro_batch_tokens / cp must divide by tp"));
  }
  if (static_cast<std::uint64_t>(p.first_gpu) + p.gpus > fabric_gpus) {
    throw Error(where + "GPUs " + std::to_string(p.first_gpu) + ".." +
                std::to_string(p.first_gpu + p.gpus - 1) + " do not fit the fabric's " +
                std::to_string(fabric_gpus));
  }
  if (!(gpu.peak_tflops > 0) || !(gpu.efficiency > 0) || gpu.efficiency > 1 ||
      !(gpu.backward_factor > 0)) {
    throw Error(where +
                "gpu.peak_tflops and backward_factor must be positive, efficiency in (0, 1]");
  }
  if (!gpu.layer_forward.empty() && gpu.layer_forward.size() != m.layers) {
    throw Error(where + "gpu.layer_forward has " + std::to_string(gpu.layer_forward.size()) +
                " times; the model has " + std::to_string(m.layers) + " layers");
  }
  for (const Time t : gpu.layer_forward) {
    if (t <= 0) throw Error(where + "gpu.layer_forward: every time must be positive");
  }
  if (skew.hot_ratio < 1 || skew.hot_ratio > p.ep || skew.zipf < 0) {
    throw Error(where + "skew.hot_ratio must be between 1 and ep, zipf not negative");
  }
  check_magnitudes(*this, where);
}

JobSpec JobSpec::rank_view() const {
  JobSpec view = *this;
  ParallelSpec& p = view.parallel;
  if (p.cp == 1) return view;
  p.micro_batch_tokens /= p.cp;
  p.dp *= p.cp;
  p.cp = 1;
  return view;
}

void JobSpec::resolve_sequences(const std::string& where) const {
  const ParallelSpec& p = parallel;
  const ModelSpec& m = model;
  const std::uint64_t kv = m.kv_heads == 0 ? m.heads : m.kv_heads;
  if (m.heads % kv != 0) {
    throw Error(where + "model.heads (" + std::to_string(m.heads) + ") must divide by kv_heads (" +
                std::to_string(kv) + ")");
  }
  if (p.sp == SpMode::kUlysses && (m.heads % p.tp != 0 || kv % p.tp != 0)) {
    throw Error(where + "parallelism.sp = \"ulysses\" splits the heads over the tp (" +
                std::to_string(p.tp) + ") ranks: model.heads (" + std::to_string(m.heads) +
                ") and kv_heads (" + std::to_string(kv) + ") must divide by it");
  }
}

void JobSpec::resolve_pipeline(const std::string& where) const {
  const ScheduleSpec& s = schedule;
  const ParallelSpec& p = parallel;
  if (s.virtual_stages == 0) throw Error(where + "schedule.virtual_stages must be positive");
  if (s.pp_schedule == PpSchedule::kInterleaved) {
    if (p.pp < 2) {
      throw Error(where + "schedule.pp_schedule = \"interleaved\" needs pp of 2 or more");
    }
    if (s.virtual_stages < 2) {
      throw Error(where +
                  "schedule.pp_schedule = \"interleaved\" needs virtual_stages of 2 or more");
    }
    if (p.micro_batches % p.pp != 0) {
      throw Error(where + "schedule.pp_schedule = \"interleaved\" needs micro_batches (" +
                  std::to_string(p.micro_batches) + ") to be a multiple of pp (" +
                  std::to_string(p.pp) + ")");
    }
    if (p.extra_warmup > 0) {
      throw Error(where + "parallelism.extra_warmup applies to the 1f1b schedule only");
    }
  } else if (s.pp_schedule == PpSchedule::kDualPipe) {
    // DualPipe.step's asserts: an even number of ranks, an even number of
    // micro-batches, at least twice the ranks.
    if (p.pp % 2 != 0) {
      throw Error(where + "schedule.pp_schedule = \"dualpipe\" needs an even pp, not " +
                  std::to_string(p.pp));
    }
    if (p.micro_batches % 2 != 0 || p.micro_batches < 2 * p.pp) {
      throw Error(where + "schedule.pp_schedule = \"dualpipe\" needs an even number of at least " +
                  std::to_string(2 * p.pp) + " micro-batches (2 x pp), not " +
                  std::to_string(p.micro_batches));
    }
    if (s.dp_reduce == DpReduce::kEveryMicroBatch) {
      throw Error(where +
                  "schedule.pp_schedule = \"dualpipe\" reduces gradients once "
                  "(dp_reduce = \"last-micro-batch\"): each stage's two copies see "
                  "different micro-batches");
    }
    if (p.extra_warmup > 0) {
      throw Error(where + "parallelism.extra_warmup applies to the 1f1b schedule only");
    }
    if (s.virtual_stages != 1) {
      throw Error(where + "schedule.virtual_stages (" + std::to_string(s.virtual_stages) +
                  ") needs pp_schedule = \"interleaved\"");
    }
  } else if (s.virtual_stages != 1) {
    throw Error(where + "schedule.virtual_stages (" + std::to_string(s.virtual_stages) +
                ") needs pp_schedule = \"interleaved\"");
  }
  const std::uint64_t stages = std::uint64_t{p.pp} * s.virtual_stages;
  if (s.stage_layers.empty()) {
    if (model.layers % stages != 0) {
      throw Error(where + "model.layers (" + std::to_string(model.layers) +
                  ") must divide by pp x virtual_stages (" + std::to_string(stages) +
                  "), or give schedule.stage_layers");
    }
    return;
  }
  if (s.stage_layers.size() != stages) {
    throw Error(where + "schedule.stage_layers has " + std::to_string(s.stage_layers.size()) +
                " stages; pp x virtual_stages is " + std::to_string(stages));
  }
  std::uint64_t sum = 0;
  for (const std::uint32_t n : s.stage_layers) {
    if (n == 0) throw Error(where + "schedule.stage_layers: every stage needs a layer");
    sum += n;
  }
  if (sum != model.layers) {
    throw Error(where + "schedule.stage_layers add up to " + std::to_string(sum) +
                " layers; the model has " + std::to_string(model.layers));
  }
}

std::vector<std::uint32_t> JobSpec::stage_starts() const {
  std::vector<std::uint32_t> starts{0};
  const std::uint32_t n = stages();
  for (std::uint32_t v = 0; v < n; ++v) {
    starts.push_back(starts.back() +
                     (schedule.stage_layers.empty() ? model.layers / n : schedule.stage_layers[v]));
  }
  return starts;
}

std::string describe_schedule(const JobSpec& job) {
  const ScheduleSpec& s = job.schedule;
  std::string text = s.dp_reduce == DpReduce::kEveryMicroBatch
                         ? "gradients reduce-scattered in every micro-batch's backward"
                         : "gradients reduce-scattered in the last micro-batch's backward";
  using B = ScheduleSpec::Bucket;
  switch (s.dp_bucket) {
    case B::kMegatron:
      text += ", in buckets of max(40 M, 1 M x DP) = " +
              std::to_string(std::max<std::uint64_t>(
                  40'000'000, 1'000'000ull * job.parallel.cp * job.parallel.dp)) +
              " parameters on the first stage, one per buffer on the others (Megatron)";
      break;
    case B::kDeepSpeed:
      text += ", in buckets of 500,000,000 parameters (DeepSpeed)";
      break;
    case B::kLayer:
      text += ", a bucket per layer";
      break;
    case B::kBuffer:
      text += ", one bucket per buffer (dense, experts) and stage";
      break;
    case B::kParameters:
      text += s.dp_bucket_parameters > 0
                  ? ", in buckets of " + std::to_string(s.dp_bucket_parameters) + " parameters"
                  : ", in buckets of " + std::to_string(s.dp_bucket_bytes) + " B";
      break;
  }
  text += ", in " + std::to_string(s.grad_reduce_dtype_bytes) + "-byte values; ";
  text += s.grad_norm_barrier ? "the gradient-norm all-reduce before the step"
                              : "no gradient-norm barrier";
  switch (s.pp_schedule) {
    case PpSchedule::k1F1B:
      text += "; pipeline: 1F1B";
      break;
    case PpSchedule::kInterleaved:
      text +=
          "; pipeline: interleaved 1F1B, " + std::to_string(s.virtual_stages) + " chunks per rank";
      break;
    case PpSchedule::kDualPipe:
      text += "; pipeline: DualPipe, weight gradients " +
              std::to_string(static_cast<int>(std::lround(s.weight_grad_share * 100))) +
              "% of a backward";
      break;
  }
  text += ", stages of";
  const std::vector<std::uint32_t> starts = job.stage_starts();
  for (std::size_t v = 0; v + 1 < starts.size(); ++v) {
    text += (v == 0 ? " " : ", ") + std::to_string(starts[v + 1] - starts[v]);
  }
  text += " layers";
  return text;
}

namespace {

Time flops_time(const JobSpec& job, double flops) {
  const double seconds = flops / (job.gpu.peak_tflops * 1e12 * job.gpu.efficiency);
  return static_cast<Time>(std::llround(seconds * 1e12));
}

/// The attention's FLOPs on one GPU: its projections (with the shared
/// experts and router in MoE layers) and its score and value products.
struct AttentionFlops {
  double projections = 0;
  double core = 0;
  double total = 0;  // as one expression, so that results do not move by a rounding
};

AttentionFlops attention_flops(const JobSpec& job, std::uint32_t layer, double square_sum) {
  const ModelSpec& m = job.model;
  const auto tokens = static_cast<double>(job.parallel.micro_batch_tokens);
  const auto tp = static_cast<double>(job.parallel.tp);
  // The score and value products: 4 h per query-key pair; a causal mask keeps half the pairs.
  const double pair_share = m.causal ? 0.5 : 1.0;
  double projections = 2.0 * static_cast<double>(m.attention_params());
  if (m.moe_layer(layer)) projections += 2.0 * static_cast<double>(m.shared_params());
  AttentionFlops f;
  f.projections = tokens * projections / tp;
  if (square_sum >= 0) {
    // Packed sequences: over each sequence's own pairs (the sum of the squared lengths).
    const double core = 4.0 * static_cast<double>(m.hidden) * square_sum * pair_share;
    f.core = core / tp;
    f.total = (tokens * projections + core) / tp;
    return f;
  }
  const double per_pair =
      4.0 * static_cast<double>(m.sequence) * static_cast<double>(m.hidden) * pair_share;
  double per_token = 2.0 * static_cast<double>(m.attention_params()) + per_pair;
  if (m.moe_layer(layer)) per_token += 2.0 * static_cast<double>(m.shared_params());
  f.core = tokens * per_pair / tp;
  f.total = tokens * per_token / tp;
  return f;
}

Time flop_attention_time(const JobSpec& job, std::uint32_t layer, double square_sum) {
  return flops_time(job, attention_flops(job, layer, square_sum).total);
}

Time flop_ffn_time(const JobSpec& job, std::uint32_t layer, double expert_load) {
  const ModelSpec& m = job.model;
  const auto tokens = static_cast<double>(job.parallel.micro_batch_tokens);
  double flops = 0;
  if (m.moe_layer(layer)) {
    // Each GPU's experts process tokens/TP x top_k tokens on average (experts are not TP-sharded).
    flops = tokens / job.parallel.tp * static_cast<double>(m.top_k) * 2.0 *
            static_cast<double>(m.expert_params()) * expert_load;
  } else {
    flops = tokens * 2.0 * static_cast<double>(m.dense_ffn_params()) / job.parallel.tp;
  }
  return flops_time(job, flops);
}

/// With measured layer times: a part's share of the layer's measured time.
Time measured_part(const JobSpec& job, std::uint32_t layer, Time part_by_flops) {
  const double whole =
      static_cast<double>(flop_attention_time(job, layer, -1) + flop_ffn_time(job, layer, 1.0));
  return static_cast<Time>(std::llround(static_cast<double>(job.gpu.layer_forward[layer]) *
                                        static_cast<double>(part_by_flops) / whole));
}

}  // namespace

Time attention_time(const JobSpec& job, std::uint32_t layer, double square_sum) {
  const Time t = flop_attention_time(job, layer, square_sum);
  return job.gpu.layer_forward.empty() ? t : measured_part(job, layer, t);
}

double attention_core_share(const JobSpec& job, std::uint32_t layer, double square_sum) {
  const AttentionFlops f = attention_flops(job, layer, square_sum);
  return f.total > 0 ? f.core / f.total : 0.0;
}

Time ffn_time(const JobSpec& job, std::uint32_t layer, double expert_load) {
  const Time t = flop_ffn_time(job, layer, expert_load);
  return job.gpu.layer_forward.empty() ? t : measured_part(job, layer, t);
}

Time lm_head_time(const JobSpec& job) {
  const ModelSpec& m = job.model;
  return flops_time(job, static_cast<double>(job.parallel.micro_batch_tokens) * 2.0 *
                             static_cast<double>(m.hidden * m.vocab) / job.parallel.tp);
}

}  // namespace shoal::work
