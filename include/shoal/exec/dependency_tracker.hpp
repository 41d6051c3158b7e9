// Which DAG nodes are ready, for the GPUs one rank owns, while the DAG runs.
// Pure bookkeeping: it is told what finished where and answers with what
// became ready there (tasks to compute, sender groups whose flows may start);
// the executor does the rest. Every rule is local to a GPU (work/dag.hpp).
//
// Kept flat: a node is done at a GPU at a "site" (a task at its own GPU, or a
// coflow at one of this rank's GPUs it touches), and each site's waiters are
// one range of a single array. Maps keyed by (node, GPU) took about a hundred
// bytes a site for the whole run.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "shoal/work/dag.hpp"

namespace shoal::exec {

/// The flows of one coflow that one GPU sends: they start together, once the
/// coflow's dependencies that concern that GPU are met.
struct SenderGroup {
  work::CoflowId coflow;
  work::GpuId gpu = 0;
  std::span<const work::FlowId> flows;
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

  SenderGroup group(SenderGroupId g) const {
    const Group& group = groups_[g];
    return {group.coflow, group.gpu,
            std::span<const work::FlowId>(group_flows_).subspan(group.first, group.count)};
  }
  std::size_t group_count() const { return groups_.size(); }
  /// Nodes (tasks and coflows) not yet done at the GPUs that track them.
  std::size_t pending() const { return pending_local_; }

 private:
  struct Waiter {
    bool is_task;
    std::uint32_t index;  // task (its place among those held), or sender group
  };
  struct Group {
    work::CoflowId coflow;
    work::GpuId gpu = 0;
    std::uint32_t first = 0;  // its flows: group_flows_[first, first + count)
    std::uint32_t count = 0;
  };
  /// Sites: tasks first (by their place among those the DAG holds), then
  /// coflow sites.
  std::uint32_t task_site(work::TaskId t) const {
    return static_cast<std::uint32_t>(dag_.task_slot(t));
  }
  std::uint32_t coflow_site(std::uint32_t slot) const { return task_count_ + slot; }
  /// The coflow's slot at GPU g (one of this rank's that it touches), or
  /// kNoSlot: a binary search among the coflow's GPUs here.
  std::uint32_t slot_of(work::CoflowId coflow, work::GpuId g) const;
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
  void done_at(std::uint32_t site, Ready& out);
  void release(const Waiter& w, Ready& out);

  const work::Dag& dag_;
  std::uint32_t task_count_ = 0;
  std::vector<Group> groups_;
  std::vector<work::FlowId> group_flows_;     // by group, each group's flows in flow order
  std::vector<std::uint32_t> task_waiting_;   // by held task: unmet dependencies
  std::vector<bool> task_owned_;              // by held task: on a GPU this rank tracks
  std::vector<std::uint32_t> group_waiting_;  // by group
  std::vector<std::uint32_t> coflow_slots_;   // by coflow: its first slot (one more at the end)
  std::vector<work::GpuId> slot_gpu_;         // by slot: the GPU, ascending within a coflow
  std::vector<std::uint32_t> slot_left_;      // by slot: the coflow's flows left at that GPU
  std::vector<std::uint32_t> waiters_first_;  // by site: its waiters' first (one more at the end)
  std::vector<Waiter> waiters_;               // by site, in the order they were added
  std::size_t pending_local_ = 0;
};

}  // namespace shoal::exec
