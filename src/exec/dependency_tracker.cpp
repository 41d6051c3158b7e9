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

  // By GPU: whether it is tracked, and a count of the coflow's flows there.
  // Each coflow's GPUs are counted in one pass over its flows and only the
  // distinct ones sorted: sorting every flow's ends took most of the time.
  const GpuId gpus = dag.gpus_used();
  std::vector<std::uint8_t> owned(gpus);
  for (GpuId g = 0; g < gpus; ++g) owned[g] = owns(g) ? 1 : 0;
  std::vector<std::uint32_t> at(gpus, 0);
  std::vector<GpuId> here;
  auto count_at = [&](GpuId g) {
    if (owned[g] && at[g]++ == 0) here.push_back(g);
  };

  // Each coflow's sites: the owned GPUs it touches, ascending, with its flows to or from each.
  coflow_slots_.reserve(coflows.size() + 1);
  for (const Coflow& coflow : coflows) {
    coflow_slots_.push_back(static_cast<std::uint32_t>(slot_gpu_.size()));
    here.clear();
    for (const Flow& f : dag.flows_of(coflow)) {
      count_at(f.src);
      count_at(f.dst);
    }
    std::sort(here.begin(), here.end());
    for (const GpuId g : here) {
      slot_gpu_.push_back(g);
      slot_left_.push_back(at[g]);
      at[g] = 0;
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
  std::vector<std::pair<GpuId, std::uint32_t>> task_deps;  // (its GPU, its place in `after`)
  std::vector<std::uint32_t> coflow_deps;                  // places in `after`
  std::vector<std::uint32_t> concerning;                   // places in `after`, ascending
  for (std::uint32_t c = 0; c < coflows.size(); ++c) {
    const Coflow& coflow = coflows[c];
    here.clear();
    // The DAG holds every flow a rank's GPUs send (exec/fragment.hpp).
    dag.for_each_flow(coflow, [&](FlowId, const Flow& flow) {
      if (owned[flow.src] && at[flow.src]++ == 0) here.push_back(flow.src);
    });
    std::sort(here.begin(), here.end());
    // Each sender's count becomes where its next flow goes.
    const auto first_group = static_cast<std::uint32_t>(groups_.size());
    auto next = static_cast<std::uint32_t>(group_flows_.size());
    for (const GpuId gpu : here) {
      const std::uint32_t count = at[gpu];
      groups_.push_back({dag.held_coflow_id(c), gpu, next, count});
      at[gpu] = next;
      next += count;
    }
    group_flows_.resize(next);
    dag.for_each_flow(coflow, [&](FlowId f, const Flow& flow) {
      if (owned[flow.src]) group_flows_[at[flow.src]++] = f;
    });
    for (const GpuId gpu : here) at[gpu] = 0;
    // The coflow's dependencies that concern each sender, in their order. A
    // task concerns its own GPU alone: the task dependencies are sorted by GPU
    // once, where testing each at every sender took time that grew with the
    // square of a coflow's members.
    task_deps.clear();
    coflow_deps.clear();
    for (std::uint32_t k = 0; k < coflow.after.size(); ++k) {
      const NodeRef dep = coflow.after[k];
      if (dep.kind == NodeRef::Kind::kCoflow) {
        coflow_deps.push_back(k);
        continue;
      }
      const GpuId g = dag.task_gpu(TaskId{dep.index});
      if (g < gpus && owned[g]) task_deps.push_back({g, k});
    }
    std::sort(task_deps.begin(), task_deps.end());
    std::size_t t = 0;
    for (std::uint32_t g = first_group; g < groups_.size(); ++g) {
      const GpuId gpu = groups_[g].gpu;
      concerning.clear();
      while (t < task_deps.size() && task_deps[t].first < gpu) ++t;
      for (; t < task_deps.size() && task_deps[t].first == gpu; ++t) {
        concerning.push_back(task_deps[t].second);
      }
      const std::size_t task_count = concerning.size();
      // A coflow concerns the sender where it has a site (a flow to or from it).
      for (const std::uint32_t k : coflow_deps) {
        if (slot_of(work::CoflowId{coflow.after[k].index}, gpu) != kNoSlot) concerning.push_back(k);
      }
      std::inplace_merge(concerning.begin(),
                         concerning.begin() + static_cast<std::ptrdiff_t>(task_count),
                         concerning.end());
      for (const std::uint32_t k : concerning) {
        added.push_back({site_of(coflow.after[k], gpu), {false, g}});
      }
      group_waiting_.push_back(static_cast<std::uint32_t>(concerning.size()));
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
  // Another sender's dependency may be a coflow this rank holds no flow of.
  if (!dag_.holds_coflow(coflow)) return kNoSlot;
  const std::size_t c = dag_.coflow_slot(coflow);
  const auto first = slot_gpu_.begin() + coflow_slots_[c];
  const auto last = slot_gpu_.begin() + coflow_slots_[c + 1];
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
