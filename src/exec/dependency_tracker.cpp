#include "shoal/exec/dependency_tracker.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "shoal/core/error.hpp"

namespace shoal::exec {

using work::Coflow;
using work::Flow;
using work::FlowId;
using work::GpuId;
using work::NodeRef;
using work::TaskId;

DependencyTracker::DependencyTracker(const work::Dag& dag, const std::function<bool(GpuId)>& owns)
    : dag_(dag), task_count_(static_cast<std::uint32_t>(dag.tasks().size())) {
  const auto& tasks = dag.tasks();  // those it holds: a fragment's are its own GPUs'
  const auto& coflows = dag.coflows();
  task_waiting_.assign(tasks.size(), 0);
  task_owned_.assign(tasks.size(), false);

  // Each coflow's sites: the owned GPUs it touches, ascending, with its flows to or from each.
  coflow_slots_.reserve(coflows.size() + 1);
  std::vector<GpuId> here;
  for (const Coflow& coflow : coflows) {
    coflow_slots_.push_back(static_cast<std::uint32_t>(slot_gpu_.size()));
    here.clear();
    for (const Flow& f : dag.flows_of(coflow)) {
      if (owns(f.src)) here.push_back(f.src);
      if (owns(f.dst)) here.push_back(f.dst);
    }
    std::sort(here.begin(), here.end());
    for (std::size_t i = 0; i < here.size();) {
      std::size_t j = i;
      while (j < here.size() && here[j] == here[i]) ++j;
      slot_gpu_.push_back(here[i]);
      slot_left_.push_back(static_cast<std::uint32_t>(j - i));
      i = j;
    }
  }
  coflow_slots_.push_back(static_cast<std::uint32_t>(slot_gpu_.size()));
  pending_local_ = slot_gpu_.size();

  // Where dependency `dep` is done for a waiter at GPU g (every rule is local to g).
  auto site_of = [&](NodeRef dep, GpuId g) {
    if (dep.kind == NodeRef::Kind::kTask) {
      if (dag.task_gpu(TaskId{dep.index}) != g) {
        throw Error("internal: a dependency on a task of GPU " +
                    std::to_string(dag.task_gpu(TaskId{dep.index})) + " at GPU " +
                    std::to_string(g));
      }
      return task_site(TaskId{dep.index});
    }
    const std::uint32_t slot = slot_of(work::CoflowId{dep.index}, g);
    if (slot == kNoSlot) {
      throw Error("internal: a dependency at GPU " + std::to_string(g) +
                  " on a coflow without a flow there");
    }
    return coflow_site(slot);
  };
  // The waiters by site, in the order they are added: tasks, then groups.
  std::vector<std::pair<std::uint32_t, Waiter>> added;
  for (std::uint32_t t = 0; t < tasks.size(); ++t) {
    if (!owns(tasks[t].gpu)) continue;
    task_owned_[t] = true;
    ++pending_local_;
    for (const NodeRef dep : tasks[t].after) {
      added.push_back({site_of(dep, tasks[t].gpu), {true, t}});
      ++task_waiting_[t];
    }
  }
  // One sender group per owned sender of each coflow, by GPU, its flows in order.
  std::vector<std::pair<GpuId, FlowId>> sends;
  for (std::uint32_t c = 0; c < coflows.size(); ++c) {
    const Coflow& coflow = coflows[c];
    sends.clear();
    // The DAG holds every flow a rank's GPUs send (exec/fragment.hpp).
    dag.for_each_flow(coflow, [&](FlowId f, const Flow& flow) {
      if (owns(flow.src)) sends.push_back({flow.src, f});
    });
    std::sort(sends.begin(), sends.end());
    for (std::size_t i = 0; i < sends.size();) {
      const GpuId gpu = sends[i].first;
      const auto g = static_cast<std::uint32_t>(groups_.size());
      Group group{work::CoflowId{c}, gpu, static_cast<std::uint32_t>(group_flows_.size()), 0};
      for (; i < sends.size() && sends[i].first == gpu; ++i) {
        group_flows_.push_back(sends[i].second);
        ++group.count;
      }
      groups_.push_back(group);
      std::uint32_t waiting = 0;
      for (const NodeRef dep : coflow.after) {
        // A coflow concerns the sender where it has a site (a flow to or from it).
        const bool concerns = dep.kind == NodeRef::Kind::kTask
                                  ? dag.task_gpu(TaskId{dep.index}) == gpu
                                  : slot_of(work::CoflowId{dep.index}, gpu) != kNoSlot;
        if (!concerns) continue;
        added.push_back({site_of(dep, gpu), {false, g}});
        ++waiting;
      }
      group_waiting_.push_back(waiting);
    }
  }

  // Each site's waiters as one range, in the order they were added.
  const std::size_t sites = task_count_ + slot_gpu_.size();
  waiters_first_.assign(sites + 1, 0);
  for (const auto& [site, w] : added) ++waiters_first_[site + 1];
  for (std::size_t s = 0; s < sites; ++s) waiters_first_[s + 1] += waiters_first_[s];
  waiters_.resize(added.size());
  std::vector<std::uint32_t> next(waiters_first_.begin(), waiters_first_.end() - 1);
  for (const auto& [site, w] : added) waiters_[next[site]++] = w;
}

std::uint32_t DependencyTracker::slot_of(work::CoflowId coflow, GpuId g) const {
  const auto first = slot_gpu_.begin() + coflow_slots_[coflow];
  const auto last = slot_gpu_.begin() + coflow_slots_[coflow + 1];
  const auto it = std::lower_bound(first, last, g);
  return it != last && *it == g ? static_cast<std::uint32_t>(it - slot_gpu_.begin()) : kNoSlot;
}

void DependencyTracker::initial(Ready& out) const {
  for (std::uint32_t t = 0; t < dag_.tasks().size(); ++t) {
    if (task_owned_[t] && task_waiting_[t] == 0) out.tasks.push_back(dag_.held_task_id(t));
  }
  for (std::uint32_t g = 0; g < groups_.size(); ++g) {
    if (group_waiting_[g] == 0) out.groups.push_back(SenderGroupId{g});
  }
}

void DependencyTracker::release(const Waiter& w, Ready& out) {
  if (w.is_task) {
    if (--task_waiting_[w.index] == 0) out.tasks.push_back(dag_.held_task_id(w.index));
  } else {
    if (--group_waiting_[w.index] == 0) out.groups.push_back(SenderGroupId{w.index});
  }
}

void DependencyTracker::done_at(std::uint32_t site, Ready& out) {
  --pending_local_;
  for (std::uint32_t i = waiters_first_[site]; i < waiters_first_[site + 1]; ++i) {
    release(waiters_[i], out);
  }
}

void DependencyTracker::task_done(TaskId task, Ready& out) { done_at(task_site(task), out); }

void DependencyTracker::flow_done_at(GpuId g, work::CoflowId coflow, Ready& out) {
  const std::uint32_t slot = slot_of(coflow, g);
  if (slot == kNoSlot) {
    throw Error("internal: a flow of coflow " + std::to_string(coflow) + " done at GPU " +
                std::to_string(g) + ", which it does not touch here");
  }
  if (--slot_left_[slot] == 0) done_at(coflow_site(slot), out);
}

}  // namespace shoal::exec
