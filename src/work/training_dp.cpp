// Data parallelism in a training job's DAG (docs/training.md, "DP"): the
// gradients of each stage reduce-scattered in buckets over their DP group,
// in the last micro-batch's backward (Megatron's distributed optimizer) or
// in every micro-batch's (DeepSpeed ZeRO-2 with gradient accumulation); the
// gradient-norm all-reduce every GPU waits for; each GPU's optimizer step;
// and the parameter all-gathers the next iteration's forward waits on.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "training_builder.hpp"

namespace shoal::work {

namespace {

/// Megatron-Core's default bucket: max(40 M, 1 M x DP) parameters
/// (DistributedDataParallel, bucket_size None).
constexpr std::uint64_t kMegatronBucketFloor = 40'000'000;
constexpr std::uint64_t kMegatronBucketPerRank = 1'000'000;
/// DeepSpeed ZeRO's reduce_bucket_size default, in elements.
constexpr std::uint64_t kDeepSpeedBucket = 500'000'000;
constexpr std::uint64_t kNoLimit = ~std::uint64_t{0};
/// The gradient norm: one fp32 value all-reduced, as a ring: reduced, then
/// broadcast, each step carrying the value.
constexpr Bytes kGradNormBytes = 2 * 4;

}  // namespace

std::uint64_t TrainingBuilder::dense_parameters(std::uint32_t layer) const {
  const bool moe = m_.moe_layer(layer);
  std::uint64_t dense = m_.attention_params() + (moe ? m_.shared_params() : m_.dense_ffn_params());
  if (layer == 0) dense += m_.vocab * m_.hidden;              // embedding
  if (layer + 1 == m_.layers) dense += m_.vocab * m_.hidden;  // LM head
  return dense / p_.tp;
}

std::uint64_t TrainingBuilder::expert_parameters(std::uint32_t layer) const {
  if (!m_.moe_layer(layer)) return 0;
  // Experts spread over the EP ranks, the uneven remainder rounded up.
  return (m_.experts + p_.ep - 1) / p_.ep * m_.expert_params();
}

std::uint64_t TrainingBuilder::bucket_limit(std::uint32_t vs) const {
  const ScheduleSpec& sch = job_.schedule;
  using B = ScheduleSpec::Bucket;
  switch (sch.dp_bucket) {
    case B::kMegatron:
      // With --overlap-grad-reduce; Megatron turns bucketing off on pipeline
      // ranks after the first, whose reduction is off the critical path, and
      // on model chunks after the first: it buckets the first stage only.
      return vs == 0 ? std::max(kMegatronBucketFloor, kMegatronBucketPerRank * p_.dp) : kNoLimit;
    case B::kDeepSpeed:
      return kDeepSpeedBucket;
    case B::kLayer:
      return 1;
    case B::kBuffer:
      return kNoLimit;
    case B::kParameters:
      return sch.dp_bucket_parameters > 0
                 ? sch.dp_bucket_parameters
                 : std::max<std::uint64_t>(1, sch.dp_bucket_bytes / sch.grad_reduce_dtype_bytes);
  }
  return kNoLimit;
}

std::vector<TrainingBuilder::Bucket> TrainingBuilder::buckets(std::uint32_t vs) const {
  // Whole layers in backward order (the highest first), closed once they hold
  // the limit: Megatron never splits a parameter across buckets, we never
  // split a layer. Each stage (a model chunk) has its buffers.
  const std::uint64_t limit = bucket_limit(vs);
  std::vector<Bucket> out;
  for (const bool experts : {false, true}) {
    Bucket open;
    open.experts = experts;
    bool any = false;
    for (std::uint32_t layer = stage_starts_[vs + 1]; layer-- > stage_starts_[vs];) {
      const std::uint64_t params = experts ? expert_parameters(layer) : dense_parameters(layer);
      if (params == 0) continue;
      if (!any) open.top = layer;
      any = true;
      open.bottom = layer;
      open.parameters += params;
      if (open.parameters >= limit) {
        out.push_back(open);
        open = Bucket{};
        open.experts = experts;
        any = false;
      }
    }
    if (any) out.push_back(open);
  }
  // Created by their last layer, the lowest first, dense before experts.
  std::stable_sort(out.begin(), out.end(), [](const Bucket& a, const Bucket& b) {
    return a.bottom != b.bottom ? a.bottom < b.bottom : !a.experts && b.experts;
  });
  return out;
}

std::vector<std::uint32_t> TrainingBuilder::holders(std::uint32_t vs) const {
  // DualPipe keeps stage vs on rank vs (the first half of the micro-batches)
  // and on rank p - 1 - vs (the second half); their gradients are summed.
  if (job_.schedule.pp_schedule == PpSchedule::kDualPipe) return {vs, p_.pp - 1 - vs};
  return {vs % p_.pp};
}

std::vector<std::vector<std::uint32_t>> TrainingBuilder::dp_groups(std::uint32_t vs,
                                                                   bool experts) const {
  const std::vector<std::uint32_t> ranks = holders(vs);
  std::vector<std::vector<std::uint32_t>> groups;
  if (!experts) {
    if (p_.dp * ranks.size() < 2) return groups;
    // Dense: the DP group of each TP rank of the stage.
    for (std::uint32_t t = 0; t < p_.tp; ++t) {
      groups.emplace_back();
      for (const std::uint32_t h : ranks) {
        for (std::uint32_t d = 0; d < p_.dp; ++d)
          groups.back().push_back(stage_rank(h, t + p_.tp * d));
      }
    }
    return groups;
  }
  if (edp_ * ranks.size() < 2) return groups;
  // Experts: the expert-data-parallel group of each (TP rank, EP rank).
  for (std::uint32_t t = 0; t < p_.tp; ++t) {
    for (std::uint32_t a = 0; a < p_.ep; ++a) {
      groups.emplace_back();
      for (const std::uint32_t h : ranks) {
        for (std::uint32_t e = 0; e < edp_; ++e) groups.back().push_back(rank(t, a, e, h));
      }
    }
  }
  return groups;
}

NodeRef TrainingBuilder::reduce_scatter(const std::string& name,
                                        const std::vector<std::uint32_t>& members, Bytes bytes,
                                        const CoflowLabels& l, std::vector<std::string> after) {
  const auto n = static_cast<Bytes>(members.size());
  const std::vector<std::vector<std::uint32_t>> across = rings_across(members);
  if (across.empty()) {
    return ring_coflow(name, members, std::max<Bytes>(1, bytes * (n - 1) / n), l, std::move(after));
  }
  // Hierarchical: reduce-scatter inside each server over NVLink ((k-1)/k x S per
  // GPU), then across servers between GPUs of one local index ((n-1)/n x S/k).
  const std::vector<std::vector<std::uint32_t>> inside = rings_inside(members);
  const auto k = static_cast<Bytes>(inside.front().size());
  const auto servers = static_cast<Bytes>(across.front().size());
  const std::string first = name + "-inside";
  const NodeRef inner =
      rings_coflow(first, inside, std::max<Bytes>(1, bytes * (k - 1) / k), l, std::move(after));
  return rings_coflow(name, across, std::max<Bytes>(1, bytes / k * (servers - 1) / servers), l,
                      {Dag::reference(inner)});
}

NodeRef TrainingBuilder::all_gather(const std::string& name,
                                    const std::vector<std::uint32_t>& members, Bytes bytes,
                                    const CoflowLabels& l, std::vector<std::string> after) {
  const auto n = static_cast<Bytes>(members.size());
  const std::vector<std::vector<std::uint32_t>> across = rings_across(members);
  if (across.empty()) {
    return ring_coflow(name, members, std::max<Bytes>(1, bytes * (n - 1) / n), l, std::move(after));
  }
  // Hierarchical: gather across servers first, then inside each server.
  const std::vector<std::vector<std::uint32_t>> inside = rings_inside(members);
  const auto k = static_cast<Bytes>(inside.front().size());
  const auto servers = static_cast<Bytes>(across.front().size());
  const std::string first = name + "-across";
  const NodeRef outer = rings_coflow(
      first, across, std::max<Bytes>(1, bytes / k * (servers - 1) / servers), l, std::move(after));
  return rings_coflow(name, inside, std::max<Bytes>(1, bytes * (k - 1) / k), l,
                      {Dag::reference(outer)});
}

void TrainingBuilder::data_parallel() {
  const std::uint32_t ranks = p_.tp * p_.pp * p_.dp;
  const ScheduleSpec& sch = job_.schedule;
  const bool every = sch.dp_reduce == DpReduce::kEveryMicroBatch;
  struct Gather {
    std::string name;
    std::vector<std::uint32_t> members;
    Bytes bytes = 0;  // the bucket's parameters on one GPU, in the model's dtype
    CoflowLabels labels;
    Bucket bucket;
  };
  // By job rank: the reductions it waits on (references: 8 bytes, where a
  // name took about 80 for every GPU of the job).
  std::vector<std::vector<NodeRef>> rs_of(ranks);
  std::vector<Gather> gathers;
  for (std::uint32_t vs = 0; vs < job_.stages(); ++vs) {
    const std::uint32_t s = holders(vs).front();  // the stage label
    for (const Bucket& bucket : buckets(vs)) {
      const std::vector<std::vector<std::uint32_t>> groups = dp_groups(vs, bucket.experts);
      for (std::size_t g = 0; g < groups.size(); ++g) {
        const std::vector<std::uint32_t>& members = groups[g];
        const std::uint32_t t = members.front() % p_.tp;
        const std::string group =
            bucket.experts ? "e" + group_id(t, ep_of(members.front())) : "d" + std::to_string(t);
        const std::string tag = prefix_ + "L" + std::to_string(bucket.bottom + 1);
        // Every micro-batch's reduction, or one of the gradients each member
        // has once its last micro-batch's backward of the stage is done.
        for (std::uint32_t reduction = 0; reduction < (every ? p_.micro_batches : 1); ++reduction) {
          std::vector<std::string> after;
          for (const std::uint32_t r : members) {
            const std::uint32_t mb = every ? reduction : final_mb_.at({r / (p_.tp * p_.dp), vs});
            const std::span<const std::string> names =
                (bucket.experts ? expert_grads_ : dense_grads_).at(grad_key(bucket.bottom, r, mb));
            after.insert(after.end(), names.begin(), names.end());
          }
          dedupe(after);
          const std::uint32_t mb = every ? reduction : p_.micro_batches - 1;
          const std::string name =
              tag + (every ? ".m" + std::to_string(mb) : "") + ".dp" + group + ".rs";
          const NodeRef rs = reduce_scatter(
              name, members, static_cast<Bytes>(bucket.parameters * sch.grad_reduce_dtype_bytes),
              labels(CoflowType::kDp, mb, bucket.bottom, s), std::move(after));
          for (const std::uint32_t r : members) rs_of[r].push_back(rs);
        }
        gathers.push_back({tag + ".dp" + group + ".ag", members,
                           static_cast<Bytes>(bucket.parameters * m_.dtype_bytes),
                           labels(CoflowType::kDp, p_.micro_batches - 1, bucket.bottom, s),
                           bucket});
      }
    }
  }
  // The gradient norm (Megatron's clip_grad_norm_fp32, over every GPU of the
  // job with the distributed optimizer): every GPU contributes once its
  // gradients are reduced and waits for it before its step.
  std::string barrier;
  if (sch.grad_norm_barrier && ranks > 1) {
    barrier = prefix_ + "gradnorm";
    std::vector<std::uint32_t> everyone(ranks);
    std::vector<std::string> after;
    for (std::uint32_t r = 0; r < ranks; ++r) {
      everyone[r] = r;
      after.insert(after.end(), last_of_stage_[r].begin(), last_of_stage_[r].end());
      for (const NodeRef rs : rs_of[r]) after.push_back(Dag::reference(rs));
    }
    dedupe(after);
    ring_coflow(barrier, everyone, kGradNormBytes,
                labels(CoflowType::kOther, p_.micro_batches - 1, 0, 0), std::move(after));
  }
  // The optimizer step on each GPU, after its last task and its reductions.
  for (std::uint32_t r = 0; r < ranks; ++r) {
    std::vector<std::string> after = last_of_stage_[r];
    for (const NodeRef rs : rs_of[r]) after.push_back(Dag::reference(rs));
    if (!barrier.empty()) after.push_back(barrier);
    optimizer_[r] = add_task(r, optimizer_name(r, iteration_), job_.gpu.optimizer, std::move(after),
                             task_labels(TaskKind::kOptimizer, p_.micro_batches - 1, 0));
  }
  for (const Gather& g : gathers) {
    std::vector<std::string> after;
    for (const std::uint32_t r : g.members) after.push_back(optimizer_[r]);
    const NodeRef gather = all_gather(g.name, g.members, g.bytes, g.labels, std::move(after));
    for (std::uint32_t layer = g.bucket.bottom; layer <= g.bucket.top; ++layer) {
      for (const std::uint32_t r : g.members) {
        ag_of_.add(gather_key(layer, r, g.bucket.experts), gather);
      }
    }
  }
  ag_of_.seal();
}

std::vector<std::vector<std::uint32_t>> TrainingBuilder::rings_inside(
    const std::vector<std::uint32_t>& members) const {
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_server;
  for (const std::uint32_t r : members) by_server[gpu(r) / p_.gpus_per_server].push_back(r);
  std::vector<std::vector<std::uint32_t>> rings;
  for (auto& [server, group] : by_server) rings.push_back(std::move(group));
  return rings;
}

std::vector<std::vector<std::uint32_t>> TrainingBuilder::rings_across(
    const std::vector<std::uint32_t>& members) const {
  if (p_.dp_algorithm != "hierarchical") return {};
  const std::vector<std::vector<std::uint32_t>> inside = rings_inside(members);
  if (inside.size() < 2 || inside.front().size() < 2) return {};
  for (const auto& group : inside) {
    if (group.size() != inside.front().size()) return {};
  }
  std::vector<std::vector<std::uint32_t>> across(inside.front().size());
  for (const auto& group : inside) {
    for (std::size_t j = 0; j < group.size(); ++j) across[j].push_back(group[j]);
  }
  return across;
}

void TrainingBuilder::add_all_gather(std::vector<std::string>& after, std::uint32_t r,
                                     std::uint32_t layer, bool experts) {
  if (const std::optional<NodeRef> gather = prev_ag_.find(gather_key(layer, r, experts))) {
    after.push_back(Dag::reference(*gather));
  }
  // An expert that moved here after the last step (expert_swap) must have arrived.
  if (const auto it = prev_swap_.find({layer, r}); experts && it != prev_swap_.end()) {
    after.push_back(it->second);
  }
}

}  // namespace shoal::work
