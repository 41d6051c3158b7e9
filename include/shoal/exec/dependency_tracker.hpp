// Which DAG nodes are ready, for the GPUs one rank owns, while the DAG runs.
// Pure bookkeeping: it is told what finished where and answers with what
// became ready there (tasks to compute, sender groups whose flows may start);
// the executor does the rest. Every rule is local to a GPU (work/dag.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "shoal/work/dag.hpp"

namespace shoal::exec {

/// The flows of one coflow that one GPU sends: they start together, once the
/// coflow's dependencies that concern that GPU are met.
struct SenderGroup {
  work::CoflowId coflow;
  work::GpuId gpu = 0;
  std::vector<work::FlowId> flows;
};
using SenderGroupId = core::DenseId<struct SenderGroupTag>;

class DependencyTracker {
 public:
  struct Ready {
    std::vector<work::TaskId> tasks;    // may compute now (on their GPU)
    std::vector<SenderGroupId> groups;  // may start their flows now
    void clear() {
      tasks.clear();
      groups.clear();
    }
  };

  /// Only GPUs for which `owns` is true are tracked.
  DependencyTracker(const work::Dag& dag, const std::function<bool(work::GpuId)>& owns);

  /// What is ready before anything has run.
  void initial(Ready& out) const;
  /// A task finished (on its GPU).
  void task_done(work::TaskId task, Ready& out);
  /// A flow of `coflow` is complete at GPU g: at its receiver on the last
  /// byte, at its sender when the acknowledgement returns.
  void flow_done_at(work::GpuId g, work::CoflowId coflow, Ready& out);

  const SenderGroup& group(SenderGroupId g) const { return groups_[g]; }
  std::size_t group_count() const { return groups_.size(); }
  /// Nodes (tasks and coflows) not yet done at the GPUs that track them.
  std::size_t pending() const { return pending_local_; }

 private:
  struct Waiter {
    bool is_task;
    std::uint32_t index;  // task, or sender group
  };
  static std::uint64_t key(work::NodeRef node, work::GpuId g) {
    return (std::uint64_t{node.kind == work::NodeRef::Kind::kTask ? 0u : 1u} << 63) |
           (std::uint64_t{node.index} << 24) | g;
  }
  void done_at(work::NodeRef node, work::GpuId g, Ready& out);
  void release(const Waiter& w, Ready& out);

  const work::Dag& dag_;
  std::vector<SenderGroup> groups_;
  std::vector<std::uint32_t> task_waiting_;   // by task: unmet dependencies
  std::vector<bool> task_owned_;              // by task: on a GPU this rank tracks
  std::vector<std::uint32_t> group_waiting_;  // by group
  std::unordered_map<std::uint64_t, std::vector<Waiter>> dependents_;  // (node, gpu)
  std::unordered_map<std::uint64_t, std::uint32_t> coflow_left_;       // (coflow, gpu): flows left
  std::size_t pending_local_ = 0;
};

}  // namespace shoal::exec
