#include "shoal/work/job_file.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include "read_count.hpp"
#include "shoal/core/error.hpp"

namespace shoal::work {
namespace {

void read_parallelism(config::ConfigFile& c, std::string_view t, ParallelSpec& p) {
  // Positive where zero means nothing: a run config's [job] table overrides a
  // job file, which resolve() would otherwise blame for the zero.
  read_positive_count(c, t, "tp", p.tp);
  read_positive_count(c, t, "pp", p.pp);
  read_positive_count(c, t, "ep", p.ep);
  read_positive_count(c, t, "cp", p.cp);
  read_count(c, t, "dp", p.dp);  // 0: derived
  read_positive_count(c, t, "micro_batches", p.micro_batches);
  read_positive_count(c, t, "micro_batch_tokens", p.micro_batch_tokens);
  read_positive_count(c, t, "iterations", p.iterations);
  read_count(c, t, "extra_warmup", p.extra_warmup);
  read_count(c, t, "first_gpu", p.first_gpu);
  read_count(c, t, "gpus", p.gpus);
  // At most the largest fabric (2^20 GPUs, fabric_config.cpp) each and together:
  // past it, tp x pp x dp would overflow JobSpec::resolve()'s 32-bit arithmetic
  // (tp = pp = 65536 made tp x pp 0, and a division by it crashed).
  constexpr std::uint64_t kMaxGpus = std::uint64_t{1} << 20;
  const auto where = "config " + c.path() + ": " + std::string(t) + ".";
  for (const auto& [key, value] : {std::pair{"tp", p.tp},
                                   {"pp", p.pp},
                                   {"ep", p.ep},
                                   {"cp", p.cp},
                                   {"dp", p.dp},
                                   {"gpus", p.gpus}}) {
    if (value > kMaxGpus) {
      throw Error(where + key + " must be at most " + std::to_string(kMaxGpus) + " (GPUs)");
    }
  }
  if (const std::uint64_t product = std::uint64_t{p.tp} * p.cp * p.pp * std::max(p.dp, 1u);
      product > kMaxGpus) {
    throw Error(where + (p.cp == 1 ? "tp x pp x dp = " : "tp x cp x pp x dp = ") +
                std::to_string(product) + " GPUs; at most " + std::to_string(kMaxGpus));
  }
  if (const auto sp = c.string(t, "sp")) {
    if (*sp == "none") {
      p.sp = SpMode::kNone;
    } else if (*sp == "ulysses") {
      p.sp = SpMode::kUlysses;
    } else {
      throw Error(where + "sp \"" + *sp + "\" is unknown (none or ulysses)");
    }
  }
  p.cp_overlap = c.boolean(t, "cp_overlap").value_or(p.cp_overlap);
  p.order = c.string(t, "order").value_or(p.order);
  p.dp_algorithm = c.string(t, "dp_algorithm").value_or(p.dp_algorithm);
}

void read_gpu(config::ConfigFile& c, std::string_view t, GpuSpec& g) {
  if (const auto type = c.string(t, "type")) {
    g.type = *type;
    // Dense BF16 tensor peaks: H100 and H800 SXM 989 TFLOP/s, A100 312.
    if (*type == "H100" || *type == "H800") {
      g.peak_tflops = 989.0;
      g.sms = 132;
    } else if (*type == "A100") {
      g.peak_tflops = 312.0;
      g.sms = 108;
    } else if (!c.number(t, "peak_tflops")) {
      throw Error("config " + c.path() + ": " + std::string(t) + ".type \"" + *type +
                  "\" is unknown (H100, H800, A100, or give peak_tflops)");
    }
  }
  g.peak_tflops = c.number(t, "peak_tflops").value_or(g.peak_tflops);
  g.efficiency = c.number(t, "efficiency").value_or(g.efficiency);
  g.backward_factor = c.number(t, "backward_factor").value_or(g.backward_factor);
  g.optimizer = c.time(t, "optimizer").value_or(g.optimizer);
  if (const auto times = c.strings(t, "layer_forward")) {
    g.layer_forward.clear();
    for (const std::string& text : *times) {
      try {
        g.layer_forward.push_back(parse_time(text));
      } catch (const Error& e) {
        throw Error("config " + c.path() + ": " + std::string(t) + ".layer_forward: " + e.what());
      }
    }
  }
}

void read_skew(config::ConfigFile& c, std::string_view t, SkewSpec& s) {
  s.hot_ratio = c.number(t, "hot_ratio").value_or(s.hot_ratio);
  s.zipf = c.number(t, "zipf").value_or(s.zipf);
  // [skew] mode and seed; in [job], whose keys are flat, skew_mode and skew_seed.
  const bool flat = t != "skew";
  const std::string mode_key = flat ? "skew_mode" : "mode";
  if (const auto mode = c.string(t, mode_key)) {
    if (*mode != "static" && *mode != "drift") {
      throw Error("config " + c.path() + ": " + std::string(t) + "." + mode_key + " \"" + *mode +
                  "\" is unknown (static or drift)");
    }
    s.drift = *mode == "drift";
  }
  read_count(c, t, flat ? "skew_seed" : "seed", s.seed);
  if (const auto file = c.string(t, "routing_file")) {
    if (file->empty())
      throw Error("config " + c.path() + ": " + std::string(t) + ".routing_file is empty");
    s.routing_name = *file;
    s.routing_base = std::filesystem::path(c.path()).parent_path().string();
  }
  if (!s.routing_name.empty() && (s.drift || s.hot_ratio != 1.0 || s.zipf != 0.0)) {
    throw Error("config " + c.path() + ": " + std::string(t) +
                ".routing_file replaces hot_ratio, zipf and the drift: give one or the other");
  }
}

/// The sequence lengths packed into the micro-batches ([data] in a job file, or [job]).
void read_sequences(config::ConfigFile& c, std::string_view t, SequenceSpec& s) {
  const std::string where = "config " + c.path() + ": " + std::string(t) + ".";
  if (const auto law = c.string(t, "sequence_lengths")) {
    if (*law == "fixed") {
      s.law = LengthLaw::kFixed;
    } else if (*law == "uniform") {
      s.law = LengthLaw::kUniform;
    } else if (*law == "lognormal") {
      s.law = LengthLaw::kLogNormal;
    } else if (*law == "file") {
      s.law = LengthLaw::kFile;
    } else {
      throw Error(where + "sequence_lengths \"" + *law +
                  "\" is unknown (fixed, uniform, lognormal or file)");
    }
    // A law given here replaces a file named before (the job file's, under [job]).
    if (s.law != LengthLaw::kFile && !c.string(t, "sequence_file")) s.file_name.clear();
  }
  read_count(c, t, "sequence_min", s.min);
  read_count(c, t, "sequence_max", s.max);
  s.mu = c.number(t, "sequence_mu").value_or(s.mu);
  s.sigma = c.number(t, "sequence_sigma").value_or(s.sigma);
  read_count(c, t, "sequence_seed", s.seed);
  if (const auto file = c.string(t, "sequence_file")) {
    if (file->empty()) throw Error(where + "sequence_file is empty");
    s.file_name = *file;
    s.file_base = std::filesystem::path(c.path()).parent_path().string();
    if (!c.string(t, "sequence_lengths")) s.law = LengthLaw::kFile;
  }
  // Checked where they are given, so that the error names this file.
  if (s.law == LengthLaw::kUniform && (s.min == 0 || s.max < s.min)) {
    throw Error(where + "sequence_lengths = \"uniform\" needs 1 <= sequence_min <= sequence_max");
  }
  if (s.law == LengthLaw::kLogNormal &&
      (!std::isfinite(s.mu) || !std::isfinite(s.sigma) || s.sigma < 0 || s.mu > 40)) {
    throw Error(where +
                "sequence_lengths = \"lognormal\" needs a finite sequence_mu (at most 40) and "
                "sequence_sigma >= 0");
  }
  if (s.law == LengthLaw::kFile && s.file_name.empty()) {
    throw Error(where + "sequence_lengths = \"file\" needs sequence_file");
  }
  if (s.law != LengthLaw::kFile && !s.file_name.empty()) {
    throw Error(where + "sequence_file needs sequence_lengths = \"file\"");
  }
}

/// The EP all-to-all's wire format ([moe] in a job file, or [job]).
void read_ep_comm(config::ConfigFile& c, std::string_view t, ModelSpec& m, EpCommSpec& e) {
  const std::string where = "config " + c.path() + ": " + std::string(t) + ".";
  read_count(c, t, "node_limit", m.node_limit);
  constexpr std::array<std::string_view, 4> kKeys = {"dispatch_dtype_bytes", "combine_dtype_bytes",
                                                     "backward_dispatch_dtype_bytes",
                                                     "backward_combine_dtype_bytes"};
  for (std::size_t i = 0; i < kKeys.size(); ++i) {
    read_count(c, t, kKeys[i], e.dtype_bytes[i]);
    if (e.dtype_bytes[i] > 8) {
      throw Error(where + std::string(kKeys[i]) + " must be 1 to 8 (1: fp8, 2: bf16)");
    }
  }
  if (const auto dedup = c.string(t, "ep_dedup")) {
    if (*dedup == "auto") {
      e.dedup = EpDedup::kAuto;
    } else if (*dedup == "per-expert") {
      e.dedup = EpDedup::kPerExpert;
    } else if (*dedup == "per-gpu") {
      e.dedup = EpDedup::kPerGpu;
    } else if (*dedup == "per-node") {
      e.dedup = EpDedup::kPerNode;
    } else {
      throw Error(where + "ep_dedup \"" + *dedup +
                  "\" is unknown (auto, per-expert, per-gpu or per-node)");
    }
  }
  if (const auto placement = c.string(t, "expert_placement")) {
    if (*placement == "in-order") {
      e.placement = ExpertPlacement::kInOrder;
    } else if (*placement == "round-robin") {
      e.placement = ExpertPlacement::kRoundRobin;
    } else if (*placement == "nic-aware") {
      e.placement = ExpertPlacement::kNicAware;
    } else {
      throw Error(where + "expert_placement \"" + *placement +
                  "\" is unknown (in-order, round-robin or nic-aware)");
    }
  }
}

void read_schedule(config::ConfigFile& c, std::string_view t, ScheduleSpec& s) {
  const std::string where = "config " + c.path() + ": " + std::string(t) + ".";
  if (const auto reduce = c.string(t, "dp_reduce")) {
    if (*reduce == "last-micro-batch") {
      s.dp_reduce = DpReduce::kLastMicroBatch;
    } else if (*reduce == "every-micro-batch") {
      s.dp_reduce = DpReduce::kEveryMicroBatch;
    } else {
      throw Error(where + "dp_reduce \"" + *reduce +
                  "\" is unknown (last-micro-batch or every-micro-batch)");
    }
  }
  if (c.holds_integer(t, "dp_bucket")) {
    std::uint64_t parameters = 0;
    read_count(c, t, "dp_bucket", parameters);
    if (parameters == 0) throw Error(where + "dp_bucket must be at least one parameter");
    s.dp_bucket = ScheduleSpec::Bucket::kParameters;
    s.dp_bucket_parameters = parameters;
  } else if (const auto bucket = c.string(t, "dp_bucket")) {
    using B = ScheduleSpec::Bucket;
    if (*bucket == "megatron") {
      s.dp_bucket = B::kMegatron;
    } else if (*bucket == "deepspeed") {
      s.dp_bucket = B::kDeepSpeed;
    } else if (*bucket == "layer") {
      s.dp_bucket = B::kLayer;
    } else if (*bucket == "buffer") {
      s.dp_bucket = B::kBuffer;
    } else {
      // A size in bytes of reduced gradients: as many parameters as it holds.
      Bytes bytes = 0;
      try {
        bytes = parse_bytes(*bucket);
      } catch (const Error&) {
        throw Error(where + "dp_bucket \"" + *bucket +
                    "\" is neither megatron, deepspeed, layer, buffer, a number of parameters "
                    "nor a size (\"160MB\")");
      }
      if (bytes <= 0) throw Error(where + "dp_bucket must be at least one byte");
      s.dp_bucket = B::kParameters;
      s.dp_bucket_bytes = static_cast<std::uint64_t>(bytes);
    }
  }
  read_count(c, t, "grad_reduce_dtype_bytes", s.grad_reduce_dtype_bytes);
  if (s.grad_reduce_dtype_bytes == 0 || s.grad_reduce_dtype_bytes > 8) {
    throw Error(where + "grad_reduce_dtype_bytes must be 1 to 8 (2: bf16, 4: fp32)");
  }
  s.grad_norm_barrier = c.boolean(t, "grad_norm_barrier").value_or(s.grad_norm_barrier);
  if (const auto schedule = c.string(t, "pp_schedule")) {
    if (*schedule == "1f1b") {
      s.pp_schedule = PpSchedule::k1F1B;
    } else if (*schedule == "interleaved") {
      s.pp_schedule = PpSchedule::kInterleaved;
    } else if (*schedule == "dualpipe") {
      s.pp_schedule = PpSchedule::kDualPipe;
    } else {
      throw Error(where + "pp_schedule \"" + *schedule +
                  "\" is unknown (1f1b, interleaved or dualpipe)");
    }
  }
  s.weight_grad_share = c.number(t, "weight_grad_share").value_or(s.weight_grad_share);
  if (!(s.weight_grad_share > 0) || !(s.weight_grad_share < 1)) {
    throw Error(where + "weight_grad_share must be between 0 and 1 (exclusive)");
  }
  read_count(c, t, "virtual_stages", s.virtual_stages);
  if (const auto layers = c.integers(t, "stage_layers")) {
    s.stage_layers.clear();
    for (const std::int64_t n : *layers) {
      if (n < 1 || n > std::numeric_limits<std::uint32_t>::max()) {
        throw Error(where + "stage_layers: every stage needs 1 to 4294967295 layers");
      }
      s.stage_layers.push_back(static_cast<std::uint32_t>(n));
    }
  }
}

}  // namespace

JobSpec read_job_file(const std::string& path) {
  config::ConfigFile c(path);
  JobSpec job;
  job.file = path;
  ModelSpec& m = job.model;
  constexpr std::string_view t = "model";
  m.name = c.string(t, "name").value_or(path);
  read_count(c, t, "layers", m.layers);
  read_count(c, t, "hidden", m.hidden);
  read_count(c, t, "heads", m.heads);
  read_count(c, t, "kv_heads", m.kv_heads);
  read_count(c, t, "ffn", m.ffn);
  read_count(c, t, "vocab", m.vocab);
  read_count(c, t, "sequence", m.sequence);
  read_count(c, t, "dtype_bytes", m.dtype_bytes);
  m.gated_ffn = c.boolean(t, "gated_ffn").value_or(m.gated_ffn);
  m.causal = c.boolean(t, "causal").value_or(m.causal);
  constexpr std::string_view moe = "moe";
  read_count(c, moe, "experts", m.experts);
  read_count(c, moe, "top_k", m.top_k);
  read_count(c, moe, "expert_ffn", m.expert_ffn);
  read_count(c, moe, "shared_ffn", m.shared_ffn);
  read_count(c, moe, "dense_layers", m.dense_layers);
  read_ep_comm(c, moe, m, job.ep_comm);
  read_parallelism(c, "parallelism", job.parallel);
  read_gpu(c, "gpu", job.gpu);
  read_skew(c, "skew", job.skew);
  read_schedule(c, "schedule", job.schedule);
  read_sequences(c, "data", job.sequences);
  read_overlap(c, "schedule", "gpu", moe, job);
  c.reject_unknown();
  return job;
}

void apply_job_overrides(config::ConfigFile& config, std::string_view table, JobSpec& job) {
  read_parallelism(config, table, job.parallel);
  // The model's depth and mask, for studies that shorten a model to fit a machine.
  read_count(config, table, "layers", job.model.layers);
  job.model.causal = config.boolean(table, "causal").value_or(job.model.causal);
  read_gpu(config, table, job.gpu);
  read_skew(config, table, job.skew);
  read_schedule(config, table, job.schedule);
  read_ep_comm(config, table, job.model, job.ep_comm);
  read_sequences(config, table, job.sequences);
  read_overlap(config, table, table, table, job);
}

}  // namespace shoal::work
