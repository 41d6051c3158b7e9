// What a training job's traffic is in closed form (EP pair bytes, skew
// weights), how its ranks are placed, and what its generated DAG sends per GPU.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/work/training_dag.hpp"

namespace shoal::work {

std::uint64_t ep_token_bytes(const JobSpec& job, EpTransfer transfer) {
  const ModelSpec& m = job.model;
  const std::uint64_t given = job.ep_comm.dtype_bytes[static_cast<std::size_t>(transfer)];
  const std::uint64_t dtype = given > 0 ? given : m.dtype_bytes;
  return m.hidden * dtype + (dtype == 1 ? (m.hidden + 127) / 128 * 4 : 0);
}

Bytes ep_pair_bytes(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  return static_cast<Bytes>(p.micro_batch_tokens / p.tp * job.model.top_k *
                            ep_token_bytes(job, EpTransfer::kDispatch) / p.ep);
}

std::string describe_ep_dedup(const JobSpec& job) {
  switch (job.ep_comm.dedup) {
    case EpDedup::kAuto:
      return job.model.node_limit > 0 ? "ep_dedup auto (node-limited relay, NVLink per expert copy)"
                                      : "ep_dedup auto (per expert)";
    case EpDedup::kPerExpert:
      return "ep_dedup per-expert";
    case EpDedup::kPerGpu:
      return "ep_dedup per-gpu";
    case EpDedup::kPerNode:
      return "ep_dedup per-node";
  }
  return "?";
}

double ep_hit(double pool, double held, std::uint64_t top_k) {
  // 1 - C(pool - held, k) / C(pool, k), as a product over the k draws.
  double miss = 1.0;
  for (std::uint64_t i = 0; i < top_k; ++i) {
    const double left = pool - held - static_cast<double>(i);
    if (left <= 0) return 1.0;
    miss *= left / (pool - static_cast<double>(i));
  }
  return 1.0 - miss;
}

std::vector<double> ep_weights(const JobSpec& job) {
  const std::uint32_t ep = job.parallel.ep;
  std::vector<double> w(ep, 1.0);
  if (ep < 2) return w;
  if (job.skew.zipf > 0) {
    double sum = 0;
    for (std::uint32_t j = 0; j < ep; ++j) sum += w[j] = 1.0 / std::pow(j + 1.0, job.skew.zipf);
    for (double& x : w) x *= ep / sum;
  } else if (job.skew.hot_ratio > 1) {
    w[0] = job.skew.hot_ratio;
    for (std::uint32_t j = 1; j < ep; ++j) w[j] = (ep - job.skew.hot_ratio) / (ep - 1);
  }
  return w;
}

std::array<int, 5> placement_axes(const std::string& order, std::uint32_t cp, std::uint32_t ep) {
  const std::string bad = "parallelism.order \"" + order +
                          "\" must name tp, ep, dp and pp once each (and cp at most once), "
                          "innermost first (e.g. tp-ep-dp-pp)";
  std::vector<int> axes;
  std::size_t pos = 0;
  bool seen[5] = {false, false, false, false, false};
  while (pos <= order.size()) {
    const std::size_t dash = std::min(order.find('-', pos), order.size());
    const std::string name = order.substr(pos, dash - pos);
    int axis = -1;
    if (name == "tp") axis = 0;
    if (name == "ep") axis = 1;
    if (name == "dp") axis = 2;
    if (name == "pp") axis = 3;
    if (name == "cp") axis = 4;
    if (axis < 0 || seen[axis]) throw Error(bad);
    seen[axis] = true;
    axes.push_back(axis);
    pos = dash + 1;
  }
  if (!seen[0] || !seen[1] || !seen[2] || !seen[3]) throw Error(bad);
  // Without cp: directly inside ep, as Megatron-Core's default tp-cp-ep-dp-pp.
  if (!seen[4]) axes.insert(std::find(axes.begin(), axes.end(), 1), 4);
  const auto at = [&](int axis) {
    return std::find(axes.begin(), axes.end(), axis) - axes.begin();
  };
  // EP groups span the CP ranks first (Megatron-Core's expert ranks): with
  // both, the CP and expert ranks are one block, cp-ep-dp.
  if (cp > 1 && ep > 1 && (at(1) != at(4) + 1 || at(2) != at(1) + 1)) {
    throw Error("parallelism.order \"" + order +
                "\": with cp and ep above 1, cp, ep and dp must follow each other in that "
                "order (EP groups span the CP ranks first, as in Megatron-Core)");
  }
  std::array<int, 5> out{};
  std::copy(axes.begin(), axes.end(), out.begin());
  return out;
}

JobTraffic job_traffic(const JobSpec& whole, const Dag& dag, std::uint32_t gpus_per_server) {
  const JobSpec job = whole.rank_view();  // one CP rank's tokens
  const ModelSpec& m = job.model;
  const ParallelSpec& p = job.parallel;
  JobTraffic t;
  t.pp_per_send =
      p.pp > 1 ? static_cast<Bytes>(p.micro_batch_tokens * m.hidden * m.dtype_bytes / p.tp) : 0;
  t.tp_per_layer_pass =
      p.tp > 1 ? static_cast<Bytes>((p.sp == SpMode::kUlysses ? 1 : 2) * 2 * (p.tp - 1) *
                                    (p.micro_batch_tokens * m.hidden * m.dtype_bytes) / p.tp)
               : 0;
  t.cp_per_layer_pass = (whole.parallel.cp - 1) * cp_block_bytes(whole);
  t.sp_per_layer_pass = ulysses_bytes(whole, true) + ulysses_bytes(whole, false);
  std::string first_dispatch;  // the first forward dispatch's name, chunk left out
  Bytes dispatch_sent = 0;
  for (const Coflow& c : dag.coflows()) {
    if (c.labels.job != job.id || c.labels.iteration != 0) continue;
    const auto type = static_cast<std::size_t>(c.labels.type);
    ++t.coflows[type];
    for (const Flow& f : dag.flows_of(c)) {
      const bool nvlink = f.src / gpus_per_server == f.dst / gpus_per_server;
      (nvlink ? t.nvlink : t.network)[type] += f.bytes;
      if (c.labels.type == CoflowType::kDp) {
        // Reduce-scatter or all-gather bytes per GPU, dense or experts (from the coflow's name).
        const bool experts = c.name.find(".dpe") != std::string::npos;
        if (c.name.find(".rs") != std::string::npos) {
          (experts ? t.dp_reduce_expert_per_gpu : t.dp_reduce_dense_per_gpu) += f.bytes;
        } else {
          (experts ? t.dp_gather_expert_per_gpu : t.dp_gather_dense_per_gpu) += f.bytes;
        }
      }
    }
    if (c.labels.type == CoflowType::kDp && c.name.ends_with(".rs")) ++t.dp_reductions;
    // The first forward dispatch (all its chunks with overlap = "chunked",
    // named ...ep<group>.c<k>.to): what one GPU sends in one, on average.
    if (c.labels.type == CoflowType::kEp && c.name.find(".f.ep") != std::string::npos &&
        c.name.ends_with(".to")) {
      std::string key(c.name);
      if (const auto chunk = key.rfind(".c");
          chunk != std::string::npos && chunk > key.rfind(".ep")) {
        key.erase(chunk, key.size() - 3 - chunk);
      }
      if (first_dispatch.empty()) first_dispatch = key;
      if (key == first_dispatch) {
        for (const Flow& f : dag.flows_of(c)) dispatch_sent += f.bytes;
      }
    }
  }
  t.ep_dispatch_per_gpu = dispatch_sent / p.ep;
  for (std::size_t i = 0; i < kCoflowTypes; ++i) {
    t.network[i] /= p.gpus;
    t.nvlink[i] /= p.gpus;
  }
  for (Bytes* dp : {&t.dp_reduce_dense_per_gpu, &t.dp_reduce_expert_per_gpu,
                    &t.dp_gather_dense_per_gpu, &t.dp_gather_expert_per_gpu}) {
    *dp /= p.gpus;
  }
  return t;
}

}  // namespace shoal::work
