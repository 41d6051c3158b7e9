// A MoE layer's expert-parallel all-to-all (docs/training.md, "Expert
// parallelism on the wire"): each ep_dedup mode's flows, made where the rank
// holds some of them and counted where it holds none.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "shoal/work/training_dag.hpp"
#include "training_builder.hpp"

namespace shoal::work {

void TrainingBuilder::ep_coflow(const std::string& name, std::uint32_t s, std::uint32_t tp,
                                std::uint32_t edp, bool forward, bool to_experts,
                                const CoflowLabels& l, std::vector<std::string> after) {
  if (dag_.trusts_generator()) {
    // Every flow of the coflow goes between two members of the group: a
    // rank none of them concerns counts the flows and makes none. The
    // count runs the same pairs as the flows, so ids and bytes match.
    std::vector<GpuId>& members = member_gpus_;
    members.clear();
    for (std::uint32_t a = 0; a < p_.ep; ++a) members.push_back(gpu(rank(tp, a, edp, s)));
    if (dag_.holds_no_flow_among(members)) {
      std::uint32_t count = 0;
      Bytes bytes = 0;
      GpuId largest = 0;
      bool accepted = true;  // no flow the check refuses, which every rank holds
      ep_pairs(s, tp, edp, forward, to_experts, l, [&](GpuId src, GpuId dst, Bytes b) {
        ++count;
        bytes += b;
        largest = std::max({largest, src, dst});
        accepted = accepted && src != dst && b > 0;
      });
      if (accepted) {
        dag_.add_unheld_coflow(l, 0, count, bytes, largest);
        return;
      }
    }
  }
  ep_flows(s, tp, edp, forward, to_experts, l);
  dag_.add_coflow(name, l, 0, flows_, std::move(after));
}

void TrainingBuilder::ep_flows(std::uint32_t s, std::uint32_t tp, std::uint32_t edp, bool forward,
                               bool to_experts, const CoflowLabels& l) {
  flows_.clear();
  ep_pairs(s, tp, edp, forward, to_experts, l, [&](GpuId src, GpuId dst, Bytes bytes) {
    flows_.push_back({src, dst, bytes});
  });
}

template <class Sink>
void TrainingBuilder::ep_pairs(std::uint32_t s, std::uint32_t tp, std::uint32_t edp, bool forward,
                               bool to_experts, const CoflowLabels& l, Sink&& sink) {
  const std::vector<double>& w = weights(l.layer - 1, l.micro_batch, edp);
  const EpTransfer transfer =
      forward ? (to_experts ? EpTransfer::kDispatch : EpTransfer::kCombine)
              : (to_experts ? EpTransfer::kBackwardDispatch : EpTransfer::kBackwardCombine);
  const std::uint64_t token = ep_token_bytes(job_, transfer);
  const std::uint64_t tokens = p_.micro_batch_tokens / p_.tp;
  // Per expert copy: tokens x top_k x token bytes / EP to each member.
  const auto base = static_cast<Bytes>(tokens * m_.top_k * token / p_.ep);
  auto add = [&](GpuId owner, GpuId expert, Bytes bytes) {
    if (to_experts) {
      sink(owner, expert, bytes);
    } else {
      sink(expert, owner, bytes);
    }
  };
  auto share = [&](std::uint32_t b) {
    return std::max<Bytes>(1, static_cast<Bytes>(std::llround(static_cast<double>(base) * w[b])));
  };
  auto copies = [&](double per_token) {  // bytes of `per_token` expected copies of each token
    return std::max<Bytes>(1, static_cast<Bytes>(std::llround(static_cast<double>(tokens * token) *
                                                              std::min(1.0, per_token))));
  };
  auto member = [&](std::uint32_t a) { return gpu(rank(tp, a, edp, s)); };
  // The group's members by server, in member order.
  std::map<std::uint32_t, std::vector<std::uint32_t>> servers;
  for (std::uint32_t a = 0; a < p_.ep; ++a) servers[member(a) / p_.gpus_per_server].push_back(a);
  const auto nodes = static_cast<std::uint32_t>(servers.size());
  const bool limited = m_.node_limit > 0 && m_.node_limit < nodes;
  EpDedup mode = job_.ep_comm.dedup;
  if (mode == EpDedup::kAuto && limited) {
    // DeepSeek's node-limited routing as Shoal has counted it: a token goes to
    // at most M of the group's N servers, chosen uniformly, and crosses the
    // network once per server (to the member there of the sender's local
    // index), which forwards it over NVLink to that server's experts, per
    // expert copy. Per sender and remote server: tokens/TP x token bytes x
    // M/N over the network. The forwarding flows start with the coflow.
    const Bytes per_node =
        std::max<Bytes>(1, static_cast<Bytes>(tokens * token) * m_.node_limit / nodes);
    for (const auto& [home, local] : servers) {
      for (std::size_t i = 0; i < local.size(); ++i) {
        const std::uint32_t a = local[i];
        for (const std::uint32_t b : local) {
          if (b != a) add(member(a), member(b), share(b));
        }
        for (const auto& [server, there] : servers) {
          if (server == home) continue;
          const std::uint32_t entry = there[i % there.size()];
          // Skew: a server of hot experts is chosen more often (its members' mean weight).
          double weight = 0;
          for (const std::uint32_t b : there) weight += w[b];
          weight /= static_cast<double>(there.size());
          add(member(a), member(entry),
              weight == 1.0 ? per_node
                            : copies(static_cast<double>(m_.node_limit) / nodes * weight));
          for (const std::uint32_t b : there) {
            if (b != entry) add(member(entry), member(b), share(b));
          }
        }
      }
    }
    return;
  }
  if (mode == EpDedup::kAuto) mode = EpDedup::kPerExpert;
  // Uniform routing: a token's top_k experts drawn without replacement from
  // all experts, or with node_limit M from the experts of M servers chosen
  // uniformly of N. A member holds experts/EP of them; skew scales a
  // member's expected copies (at most one per token).
  const double held = static_cast<double>(m_.experts) / p_.ep;
  const double chosen = limited ? static_cast<double>(m_.node_limit) / nodes : 1.0;
  auto gpu_copies = [&](std::uint32_t b, std::size_t server_members) {
    const double pool = limited ? held * static_cast<double>(server_members * m_.node_limit)
                                : static_cast<double>(m_.experts);
    return chosen * ep_hit(pool, held, m_.top_k) * w[b];
  };
  std::vector<std::size_t> server_size(p_.ep);
  for (const auto& [server, there] : servers) {
    for (const std::uint32_t b : there) server_size[b] = there.size();
  }
  if (mode != EpDedup::kPerNode) {
    // What each member's experts take from each other member: a function of
    // the member alone, so worked out once per coflow.
    std::vector<Bytes>& to_member = member_bytes_;
    to_member.resize(p_.ep);
    for (std::uint32_t b = 0; b < p_.ep; ++b) {
      to_member[b] = mode == EpDedup::kPerExpert ? share(b) : copies(gpu_copies(b, server_size[b]));
    }
    for (std::uint32_t a = 0; a < p_.ep; ++a) {
      for (std::uint32_t b = 0; b < p_.ep; ++b) {
        // a owns the tokens, b holds experts: dispatch a -> b, combine b -> a.
        if (a != b) add(member(a), member(b), to_member[b]);
      }
    }
    return;
  }
  // Per node (DeepEP internode): one network copy per remote server holding
  // one of the token's experts, to the member of the sender's local index,
  // which forwards one copy over NVLink to each other member there that
  // holds one; members of the sender's own server get one copy each.
  for (const auto& [home, local] : servers) {
    for (std::size_t i = 0; i < local.size(); ++i) {
      const std::uint32_t a = local[i];
      for (const std::uint32_t b : local) {
        if (b != a) add(member(a), member(b), copies(gpu_copies(b, local.size())));
      }
      for (const auto& [server, there] : servers) {
        if (server == home) continue;
        double weight = 0;
        for (const std::uint32_t b : there) weight += w[b];
        weight /= static_cast<double>(there.size());
        const double node_hit = limited
                                    ? chosen
                                    : ep_hit(static_cast<double>(m_.experts),
                                             held * static_cast<double>(there.size()), m_.top_k);
        const std::uint32_t entry = there[i % there.size()];
        add(member(a), member(entry), copies(node_hit * weight));
        for (const std::uint32_t b : there) {
          if (b != entry) add(member(entry), member(b), copies(gpu_copies(b, there.size())));
        }
      }
    }
  }
}

}  // namespace shoal::work
