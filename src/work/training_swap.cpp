// Per-step expert swaps in a training job's DAG (docs/training.md,
// "Per-step expert swaps"): after an iteration's step, each swap the
// iteration's loads call for (expert_swap.hpp) moves two experts' weights
// between two GPUs of one server in every EP group that holds the layer, and
// the next iteration's experts there wait for them.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "training_builder.hpp"

namespace shoal::work {

std::vector<std::uint32_t> TrainingBuilder::swap_classes() const {
  // Member a's server in every EP group (tp, expert-data index, pipeline rank).
  std::vector<std::vector<std::uint32_t>> servers(p_.ep);
  for (std::uint32_t s = 0; s < p_.pp; ++s) {
    for (std::uint32_t tp = 0; tp < p_.tp; ++tp) {
      for (std::uint32_t e = 0; e < edp_; ++e) {
        for (std::uint32_t a = 0; a < p_.ep; ++a) {
          servers[a].push_back(gpu(rank(tp, a, e, s)) / p_.gpus_per_server);
        }
      }
    }
  }
  std::vector<std::uint32_t> classes(p_.ep);
  for (std::uint32_t a = 0; a < p_.ep; ++a) {
    classes[a] = a;
    for (std::uint32_t b = 0; b < a; ++b) {
      if (servers[b] == servers[a]) {
        classes[a] = classes[b];
        break;
      }
    }
  }
  return classes;
}

void TrainingBuilder::swap_experts() {
  const std::vector<ExpertSwapper::Swap> swaps = swapper_->end_iteration();
  prev_swap_.clear();
  // A swap after the last step would serve no iteration.
  if (iteration_ + 1 == p_.iterations) return;
  const Bytes bytes = ExpertSwapper::swap_bytes(job_, edp_);
  for (const ExpertSwapper::Swap& w : swaps) {
    std::uint32_t vs = 0;
    while (stage_starts_[vs + 1] <= w.layer) ++vs;
    for (const std::uint32_t s : holders(vs)) {
      for (std::uint32_t tp = 0; tp < p_.tp; ++tp) {
        for (std::uint32_t e = 0; e < edp_; ++e) {
          const std::uint32_t hot = rank(tp, w.hot, e, s), cold = rank(tp, w.cold, e, s);
          // After the step has updated both experts (their all-gather where
          // the experts are data-parallel, else the optimizer step).
          std::vector<std::string> after;
          for (const std::uint32_t r : {hot, cold}) {
            const std::optional<NodeRef> ag = ag_of_.find(gather_key(w.layer, r, true));
            after.push_back(ag ? Dag::reference(*ag) : optimizer_[r]);
          }
          const std::string name = prefix_ + "L" + std::to_string(w.layer + 1) + ".swap.s" +
                                   std::to_string(s) + ".ep" + group_id(tp, e);
          flows_.clear();
          flows_.push_back({gpu(hot), gpu(cold), bytes});
          flows_.push_back({gpu(cold), gpu(hot), bytes});
          dag_.add_coflow(name, labels(CoflowType::kEp, p_.micro_batches - 1, w.layer, s), 0,
                          flows_, std::move(after));
          prev_swap_[{w.layer, hot}] = name;
          prev_swap_[{w.layer, cold}] = name;
        }
      }
    }
  }
}

}  // namespace shoal::work
