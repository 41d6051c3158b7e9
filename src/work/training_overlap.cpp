// Compute-communication overlap in a training job's DAG (docs/training.md,
// "Overlap"): two micro-batches side by side (two-batch overlap), or each
// MoE layer's all-to-alls and expert compute in chunks (MegaScale-MoE).
// Neither adds compute or bytes: they only change which task and coflow waits
// for which, so the GPU, which computes one ready task at a time, fills one
// chain's communication with another's compute.
#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "shoal/core/error.hpp"
#include "training_builder.hpp"

namespace shoal::work {

void TrainingBuilder::paired(std::uint32_t s, std::uint32_t vs, std::uint32_t unit, bool forward) {
  // Both micro-batches start from what the GPU last did (and each from its
  // own input from the neighbouring stage), run as two independent chains of
  // the same tasks and coflows as alone, send their own outputs, and the
  // step after the pair waits for both chains' ends.
  const std::uint32_t n = p_.tp * p_.dp;
  const std::uint32_t first = 2 * unit, second = first + 1;
  const Ready inputs = last_;
  const bool was = overlapping_;
  overlapping_ = true;
  if (forward) {
    forward_pass(s, vs, first);
  } else {
    backward_pass(s, vs, first);
  }
  const Ready first_end = std::move(last_);
  last_ = inputs;
  if (forward) {
    forward_pass(s, vs, second);
  } else {
    backward_pass(s, vs, second);
  }
  overlapping_ = was;
  for (std::uint32_t i = 0; i < n; ++i) {
    ready(i).insert(ready(i).end(), first_end[i].begin(), first_end[i].end());
    dedupe(ready(i));
  }
  if (forward || !recording_grads_ || job_.schedule.dp_reduce != DpReduce::kLastMicroBatch) return;
  // The pair's second micro-batch stands for the pair when the gradients are
  // reduced once: its entries wait for the first's backward too.
  for (std::uint32_t layer = stage_starts_[vs]; layer < stage_starts_[vs + 1]; ++layer) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t r = stage_rank(s, i);
      for (NameLists* grads : {&dense_grads_, &expert_grads_}) {
        const std::optional<std::span<const std::string>> a =
            grads->find(grad_key(layer, r, first));
        if (!a) continue;
        grads->append(grad_key(layer, r, second), std::vector<std::string>(a->begin(), a->end()));
      }
    }
  }
}

void TrainingBuilder::chunked_ffn(std::uint32_t s, std::uint32_t mb, std::uint32_t layer,
                                  bool forward) {
  const std::uint32_t n = p_.tp * p_.dp;
  const std::uint32_t k = job_.overlap.chunks;
  const double factor = forward ? 1.0 : job_.gpu.backward_factor * backward_share_;
  const TaskKind kind = forward ? TaskKind::kForward : TaskKind::kBackward;
  const std::string tag = pass_tag(mb, layer, forward);
  const CoflowLabels l = labels(CoflowType::kEp, mb, layer, s);
  auto coflow_name = [&](std::uint32_t tp, std::uint32_t e, std::uint32_t c, bool to) {
    return tag + ".ep" + group_id(tp, e) + ".c" + std::to_string(c) + (to ? ".to" : ".back");
  };
  auto task_chunk = [&](std::uint32_t r, std::uint32_t c) {
    return task_name(r, forward, mb, layer, 'f') + std::to_string(c);
  };
  // What names each stage GPU's chunks once added (TrainingBuilder::add_task), by i x K + c.
  std::vector<std::string> chunk_refs(std::size_t{n} * k);
  // Chunk c of the unchunked coflow's flows: each flow's bytes / K, the first
  // (bytes mod K) chunks one byte more, so the chunks add up to the byte; a
  // flow of fewer than K bytes is absent from the chunks it has no byte for.
  std::vector<Flow> whole;
  std::vector<GpuId> members(p_.ep);  // the group's GPUs, sorted
  std::vector<bool> touched(p_.ep);
  auto emit = [&](const std::string& name, std::uint32_t c, std::vector<std::string> after) {
    flows_.clear();
    for (const Flow& f : whole) {
      const Bytes b = f.bytes / k + (static_cast<Bytes>(c) < f.bytes % k ? 1 : 0);
      if (b > 0) flows_.push_back({f.src, f.dst, b});
    }
    // Every member waits on every chunk, so each must have a flow in it.
    std::fill(touched.begin(), touched.end(), false);
    for (const Flow& f : flows_) {
      for (const GpuId g : {f.src, f.dst}) {
        const auto at = std::lower_bound(members.begin(), members.end(), g);
        if (at != members.end() && *at == g) touched[at - members.begin()] = true;
      }
    }
    for (std::size_t a = 0; a < members.size(); ++a) {
      if (!touched[a]) {
        throw Error("job " + job_.file + ": schedule.overlap_chunks (" + std::to_string(k) +
                    ") leaves GPU " + std::to_string(members[a]) + " no byte in " + name +
                    ": use fewer chunks");
      }
    }
    if (dag_.holds_no_flow_among(members)) {
      // No flow of it is held here: counted, as ep_coflow counts an unchunked one.
      Bytes bytes = 0;
      for (const Flow& f : flows_) bytes += f.bytes;
      dag_.add_unheld_coflow(l, 0, static_cast<std::uint32_t>(flows_.size()), bytes,
                             members.back());
      return;
    }
    dag_.add_coflow(name, l, 0, flows_, std::move(after));
  };
  auto group = [&](std::uint32_t tp, std::uint32_t e) {
    for (std::uint32_t a = 0; a < p_.ep; ++a) members[a] = gpu(rank(tp, a, e, s));
    std::sort(members.begin(), members.end());
  };
  // The dispatch: chunk c + 1 after chunk c (one communication stream), the
  // first after the members' last tasks.
  for (std::uint32_t tp = 0; tp < p_.tp; ++tp) {
    for (std::uint32_t e = 0; e < edp_; ++e) {
      std::vector<std::string> after = group_ready(tp, e, s);
      group(tp, e);
      ep_flows(s, tp, e, forward, true, l);
      whole = flows_;
      for (std::uint32_t c = 0; c < k; ++c) {
        emit(coflow_name(tp, e, c, true), c,
             c == 0 ? std::move(after) : std::vector<std::string>{coflow_name(tp, e, c - 1, true)});
      }
    }
  }
  // The experts' compute in K tasks, chunk c after its dispatch and chunk c
  // - 1: it runs while chunk c + 1 is dispatched and chunk c - 1 combined.
  const bool was = overlapping_;
  overlapping_ = true;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t r = stage_rank(s, i);
    const std::uint32_t tp = r % p_.tp, e = edp_of(r);
    Time t = ffn_time(job_, layer, weights(layer, mb, e)[ep_of(r)]);
    if (layer + 1 == m_.layers) t += lm_head_time(job_);
    const auto total = static_cast<Time>(std::llround(static_cast<double>(t) * factor));
    for (std::uint32_t c = 0; c < k; ++c) {
      std::vector<std::string> after{coflow_name(tp, e, c, true)};
      if (c > 0) after.push_back(chunk_refs[i * k + c - 1]);
      if (c == 0 && forward && waits_for_parameters(mb)) add_all_gather(after, r, layer, true);
      chunk_refs[i * k + c] = task(r, task_chunk(r, c), total / k + (c < total % k ? 1 : 0),
                                   std::move(after), kind, mb, layer);
    }
    if (!forward && recording_grads_) {
      expert_grads_.set(grad_key(layer, r, mb), std::span(&chunk_refs[i * k + k - 1], 1));
    }
  }
  overlapping_ = was;
  // The combine: chunk c after every member's compute of chunk c.
  for (std::uint32_t tp = 0; tp < p_.tp; ++tp) {
    for (std::uint32_t e = 0; e < edp_; ++e) {
      group(tp, e);
      ep_flows(s, tp, e, forward, false, l);
      whole = flows_;
      for (std::uint32_t c = 0; c < k; ++c) {
        std::vector<std::string> after;
        for (std::uint32_t a = 0; a < p_.ep; ++a)
          after.push_back(chunk_refs[std::size_t{local(rank(tp, a, e, s), s)} * k + c]);
        emit(coflow_name(tp, e, c, false), c, std::move(after));
      }
    }
  }
  // The layer goes on once every chunk is combined.
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t r = stage_rank(s, i);
    ready(i).clear();
    for (std::uint32_t c = 0; c < k; ++c)
      ready(i).push_back(coflow_name(r % p_.tp, edp_of(r), c, false));
  }
}

}  // namespace shoal::work
