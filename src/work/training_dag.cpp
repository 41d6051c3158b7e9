// The pipeline schedule of a training job's DAG, each layer's compute and
// its TP and PP coflows (docs/training.md); the EP all-to-alls are in
// training_ep.cpp, data parallelism in training_dp.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/core/random.hpp"
#include "shoal/work/training_dag.hpp"
#include "training_builder.hpp"

namespace shoal::work {

TrainingBuilder::TrainingBuilder(const JobSpec& job, Dag& dag)
    : view_(job.rank_view()),
      cp_(job.parallel.cp),
      job_(view_),
      m_(view_.model),
      p_(view_.parallel),
      dag_(dag),
      edp_(p_.dp / p_.ep),
      stage_starts_(job.stage_starts()),
      weights_(ep_weights(job)),
      axes_(placement_axes(job.parallel.order, job.parallel.cp, job.parallel.ep)) {
  // A fragment keeps only what its rank's run needs of each coflow: the
  // dependencies here are right by construction (a whole DAG checks them).
  dag_.trust_generator();
  gpu_of_.resize(std::size_t{p_.tp} * p_.dp * p_.pp);
  optimizer_.resize(gpu_of_.size());
  for (std::uint32_t r = 0; r < gpu_of_.size(); ++r) gpu_of_[r] = place(r);
  if (!job.skew.routing_file.empty()) routing_ = RoutingTable::read(job.skew.routing_file, job);
  const SequenceSpec& seq = job.sequences;
  if (seq.law != LengthLaw::kFixed) {
    // One draw per data-parallel replica, shared by its TP, CP and PP ranks.
    packing_.emplace(seq, job.parallel.micro_batch_tokens, p_.iterations, p_.micro_batches,
                     job.parallel.dp, job.id,
                     seq.law == LengthLaw::kFile ? read_sequence_lengths(seq.file)
                                                 : std::vector<std::uint64_t>{});
  }
  if (job.overlap.expert_swap == ExpertSwap::kPerStep) {
    if (!routing_) throw Error("job " + job.file + ": moe.expert_swap needs a routing file");
    swapper_.emplace(job, *routing_, swap_classes());
  }
}

void TrainingBuilder::build() {
  for (std::uint32_t it = 0; it < p_.iterations; ++it) {
    iteration_ = it;
    prefix_ = "j" + std::to_string(job_.id) + ".i" + std::to_string(it) + ".";
    if (swapper_) swapper_->begin_iteration(it);
    for (std::uint32_t r = 0; r < p_.pp; ++r) {
      schedule_rank(r);
      for (std::uint32_t i = 0; i < p_.tp * p_.dp; ++i) last_of_stage_[stage_rank(r, i)] = last_[i];
    }
    data_parallel();
    if (swapper_) swap_experts();
    // This iteration's all-gathers are what the next one's forward waits on.
    prev_ag_ = std::move(ag_of_);
    ag_of_ = NodeTable();
    dense_grads_.clear();
    final_mb_.clear();
    expert_grads_.clear();
  }
}

GpuId TrainingBuilder::place(std::uint32_t r) const {
  // tp, ep, dp (expert-data), pp, cp. With CP the data index d = c + CP x
  // is placed as (cp c, dp x); placement_axes keeps cp-ep-dp together when
  // EP also exceeds 1, so EP's members (d mod EP) stay where Megatron-Core puts them.
  const std::uint32_t d = (r / p_.tp) % p_.dp;
  const bool cp = cp_ > 1;
  const std::uint32_t coord[5] = {r % p_.tp, cp ? 0 : d % p_.ep, cp ? d / cp_ : d / p_.ep,
                                  r / (p_.tp * p_.dp), cp ? d % cp_ : 0};
  const std::uint32_t size[5] = {p_.tp, cp ? 1 : p_.ep, cp ? p_.dp / cp_ : edp_, p_.pp, cp_};
  std::uint32_t placed = 0, stride = 1;
  for (const int axis : axes_) {
    placed += coord[axis] * stride;
    stride *= size[axis];
  }
  return p_.first_gpu + placed;
}

CoflowLabels TrainingBuilder::labels(CoflowType type, std::uint32_t mb, std::uint32_t layer,
                                     std::uint32_t stage) const {
  CoflowLabels l;
  l.type = type;
  l.job = job_.id;
  l.iteration = iteration_;
  l.micro_batch = mb;
  l.layer = layer + 1;  // layer IDs from 1
  l.stage = stage;
  return l;
}

std::string TrainingBuilder::task_name(std::uint32_t r, bool forward, std::uint32_t mb,
                                       std::uint32_t layer, char part) const {
  return prefix_ + "g" + std::to_string(gpu(r)) + (forward ? ".F" : ".B") + std::to_string(mb) +
         ".L" + std::to_string(layer + 1) + "." + part;
}

std::string TrainingBuilder::pass_tag(std::uint32_t mb, std::uint32_t layer, bool forward) const {
  return prefix_ + "m" + std::to_string(mb) + ".L" + std::to_string(layer + 1) +
         (forward ? ".f" : ".b");
}

std::string TrainingBuilder::optimizer_name(std::uint32_t r, std::uint32_t it) const {
  return "j" + std::to_string(job_.id) + ".i" + std::to_string(it) + ".g" + std::to_string(gpu(r)) +
         ".opt";
}

std::string TrainingBuilder::pp_name(std::uint32_t mb, std::uint32_t from_stage, bool forward,
                                     std::uint32_t i) const {
  const std::uint32_t d = i / p_.tp;  // the data-parallel replica
  return prefix_ + "m" + std::to_string(mb) + ".pp" + std::to_string(from_stage) +
         (forward ? "f" : "b") + ".r" + std::to_string(d);
}

void TrainingBuilder::dedupe(std::vector<std::string>& names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
}

std::vector<std::string> TrainingBuilder::group_ready(std::uint32_t tp, std::uint32_t e,
                                                      std::uint32_t s) {
  std::vector<std::string> after;
  for (std::uint32_t a = 0; a < p_.ep; ++a) {
    const std::uint32_t i = local(rank(tp, a, e, s), s);
    after.insert(after.end(), ready(i).begin(), ready(i).end());
  }
  dedupe(after);
  return after;
}

std::string TrainingBuilder::task(std::uint32_t r, std::string name, Time duration,
                                  std::vector<std::string> after, TaskKind kind, std::uint32_t mb,
                                  std::uint32_t layer) {
  if (overlapping_ && job_.overlap.comm_sms > 0) {
    // The SMs the overlapped all-to-all's kernels hold are lost to compute.
    duration = static_cast<Time>(
        std::llround(static_cast<double>(duration) * job_.overlap.slowdown(job_.gpu.sms)));
  }
  return add_task(r, std::move(name), duration, std::move(after), task_labels(kind, mb, layer));
}

std::string TrainingBuilder::add_task(std::uint32_t r, std::string name, Time duration,
                                      std::vector<std::string> after, const TaskLabels& labels) {
  if (!dag_.holds_tasks_of(gpu(r))) return Dag::reference(dag_.add_unnamed_task(gpu(r), labels));
  dag_.add_task(name, gpu(r), duration, std::move(after), labels);
  return name;
}

void TrainingBuilder::forward_pass(std::uint32_t s, std::uint32_t vs, std::uint32_t mb,
                                   bool receive, bool send) {
  const std::uint32_t n = p_.tp * p_.dp;
  // Entering the stage: the previous stage's activations; in later
  // iterations micro-batch 0 waits for the parameters (all-gather) layer by layer.
  if (receive && vs > 0) {
    for (std::uint32_t i = 0; i < n; ++i) ready(i).push_back(pp_name(mb, vs - 1, true, i));
  }
  for (std::uint32_t layer = stage_starts_[vs]; layer < stage_starts_[vs + 1]; ++layer) {
    const bool moe = m_.moe_layer(layer);
    ulysses(s, mb, layer, true, true);
    attention_pass(s, mb, layer, true);
    ulysses(s, mb, layer, true, false);
    ffn(s, mb, layer, moe, true);
    tensor_parallel(s, mb, layer, true);
  }
  if (send && vs + 1 < job_.stages()) send_pp(vs, vs + 1, mb, true);
}

void TrainingBuilder::backward_pass(std::uint32_t s, std::uint32_t vs, std::uint32_t mb,
                                    bool receive, bool send) {
  const std::uint32_t n = p_.tp * p_.dp;
  if (receive && vs + 1 < job_.stages()) {
    for (std::uint32_t i = 0; i < n; ++i) ready(i).push_back(pp_name(mb, vs + 1, false, i));
  }
  for (std::uint32_t layer = stage_starts_[vs + 1]; layer-- > stage_starts_[vs];) {
    const bool moe = m_.moe_layer(layer);
    ffn(s, mb, layer, moe, false);
    ulysses(s, mb, layer, false, true);
    attention_pass(s, mb, layer, false);
    ulysses(s, mb, layer, false, false);
    tensor_parallel(s, mb, layer, false);
    if (recording_grads_) {
      // This micro-batch's gradients of the layer are ready to be reduced.
      for (std::uint32_t i = 0; i < n; ++i) {
        dense_grads_.set(grad_key(layer, stage_rank(s, i), mb), ready(i));
      }
    }
  }
  if (send && vs > 0) send_pp(vs, vs - 1, mb, false);
}

const std::vector<double>& TrainingBuilder::weights(std::uint32_t layer, std::uint32_t mb,
                                                    std::uint32_t edp) {
  if (swapper_) return swapper_->weights(layer, mb);
  if (routing_) return routing_->weights(iteration_, layer, mb);
  if (!job_.skew.drift) return weights_;
  // One stream per (job, iteration, layer, micro-batch, group): the same draw
  // for the dispatch, the experts' compute and the combine of both passes.
  const std::uint64_t key =
      core::mix64(core::mix64(core::mix64(core::mix64(job_.id) ^ iteration_) ^ layer) ^ mb) ^ edp;
  core::Rng rng(job_.skew.seed, key);
  drawn_ = weights_;
  for (std::size_t i = drawn_.size(); i > 1; --i) {  // Fisher-Yates
    std::swap(drawn_[i - 1], drawn_[rng.below(i)]);
  }
  return drawn_;
}

void TrainingBuilder::ffn(std::uint32_t s, std::uint32_t mb, std::uint32_t layer, bool moe,
                          bool forward) {
  const std::uint32_t n = p_.tp * p_.dp;
  const double factor = forward ? 1.0 : job_.gpu.backward_factor * backward_share_;
  const TaskKind kind = forward ? TaskKind::kForward : TaskKind::kBackward;
  const bool all_to_all = moe && p_.ep > 1;
  const std::string tag = pass_tag(mb, layer, forward);
  if (all_to_all && job_.overlap.mode == Overlap::kChunked && job_.overlap.chunks > 1) {
    chunked_ffn(s, mb, layer, forward);
    return;
  }
  if (all_to_all) {
    // Forward: dispatch to the experts, combine back. Backward: the output
    // gradients go to the experts, the input gradients come back.
    for (std::uint32_t tp = 0; tp < p_.tp; ++tp) {
      for (std::uint32_t e = 0; e < edp_; ++e) {
        std::vector<std::string> after = group_ready(tp, e, s);
        ep_coflow(tag + ".ep" + group_id(tp, e) + ".to", s, tp, e, forward, true,
                  labels(CoflowType::kEp, mb, layer, s), std::move(after));
      }
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t r = stage_rank(s, i);
      ready(i) = {tag + ".ep" + group_id(r % p_.tp, edp_of(r)) + ".to"};
    }
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t r = stage_rank(s, i);
    const double load = moe ? weights(layer, mb, edp_of(r))[ep_of(r)] : 1.0;
    Time t = ffn_time(job_, layer, load);
    if (layer + 1 == m_.layers)
      t += lm_head_time(job_);  // the last stage's head, with its last layer
    if (forward && moe && waits_for_parameters(mb)) add_all_gather(ready(i), r, layer, true);
    std::string f = task(r, task_name(r, forward, mb, layer, 'f'),
                         static_cast<Time>(std::llround(static_cast<double>(t) * factor)),
                         std::move(ready(i)), kind, mb, layer);
    ready(i) = {f};
    if (moe && !forward && recording_grads_) expert_grads_.set(grad_key(layer, r, mb), ready(i));
  }
  if (all_to_all) {
    for (std::uint32_t tp = 0; tp < p_.tp; ++tp) {
      for (std::uint32_t e = 0; e < edp_; ++e) {
        std::vector<std::string> after;
        for (std::uint32_t a = 0; a < p_.ep; ++a) {
          after.push_back(ready(local(rank(tp, a, e, s), s)).front());  // its task above
        }
        ep_coflow(tag + ".ep" + group_id(tp, e) + ".back", s, tp, e, forward, false,
                  labels(CoflowType::kEp, mb, layer, s), std::move(after));
      }
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t r = stage_rank(s, i);
      ready(i) = {tag + ".ep" + group_id(r % p_.tp, edp_of(r)) + ".back"};
    }
  }
}

void TrainingBuilder::tensor_parallel(std::uint32_t s, std::uint32_t mb, std::uint32_t layer,
                                      bool forward) {
  if (p_.tp < 2) return;
  const std::string tag = pass_tag(mb, layer, forward) + ".tp";
  for (std::uint32_t d = 0; d < p_.dp; ++d) {
    const std::uint32_t ep = d % p_.ep, e = d / p_.ep;
    const std::vector<std::uint32_t> members = tp_group(s, ep, e);
    std::vector<std::string> after;
    for (const std::uint32_t r : members) {
      const auto& rd = ready(local(r, s));
      after.insert(after.end(), rd.begin(), rd.end());
    }
    dedupe(after);
    const std::string name = tag + std::to_string(d);
    ring_coflow(name, members, tp_bytes(), labels(CoflowType::kTp, mb, layer, s), std::move(after));
    for (const std::uint32_t r : members) ready(local(r, s)) = {name};
  }
}

NodeRef TrainingBuilder::ring_coflow(const std::string& name,
                                     const std::vector<std::uint32_t>& members, Bytes bytes,
                                     const CoflowLabels& l, std::vector<std::string> after) {
  flows_.clear();
  for (std::size_t i = 0; i < members.size(); ++i) {
    flows_.push_back({gpu(members[i]), gpu(members[(i + 1) % members.size()]), bytes});
  }
  return dag_.add_coflow(name, l, 0, flows_, std::move(after));
}

NodeRef TrainingBuilder::rings_coflow(const std::string& name,
                                      const std::vector<std::vector<std::uint32_t>>& rings,
                                      Bytes bytes, const CoflowLabels& l,
                                      std::vector<std::string> after) {
  flows_.clear();
  for (const auto& ring : rings) {
    for (std::size_t i = 0; i < ring.size(); ++i) {
      flows_.push_back({gpu(ring[i]), gpu(ring[(i + 1) % ring.size()]), bytes});
    }
  }
  return dag_.add_coflow(name, l, 0, flows_, std::move(after));
}

std::vector<std::uint32_t> TrainingBuilder::tp_group(std::uint32_t s, std::uint32_t ep,
                                                     std::uint32_t edp) const {
  std::vector<std::uint32_t> g;
  for (std::uint32_t t = 0; t < p_.tp; ++t) g.push_back(rank(t, ep, edp, s));
  return g;
}

// Two ring all-reduces of the layer's activations per pass; with Ulysses
// the attention's is replaced by its all-to-alls, the MLP's remains.
Bytes TrainingBuilder::tp_bytes() const {
  const Bytes buffer = static_cast<Bytes>(p_.micro_batch_tokens * m_.hidden * m_.dtype_bytes);
  return (p_.sp == SpMode::kUlysses ? 1 : 2) * 2 * (p_.tp - 1) * buffer / p_.tp;
}

void add_training_job(const JobSpec& job, Dag& dag) { TrainingBuilder(job, dag).build(); }

}  // namespace shoal::work
