#include "shoal/exec/dependency_tracker.hpp"

#include <map>

namespace shoal::exec {

using work::Coflow;
using work::Flow;
using work::FlowId;
using work::GpuId;
using work::NodeRef;
using work::TaskId;

DependencyTracker::DependencyTracker(const work::Dag& dag, const std::function<bool(GpuId)>& owns)
    : dag_(dag) {
  const auto& tasks = dag.tasks();
  const auto& coflows = dag.coflows();
  task_waiting_.assign(tasks.size(), 0);
  task_owned_.assign(tasks.size(), false);
  // Does coflow c have a flow to or from g?
  auto touches = [&](std::uint32_t c, GpuId g) {
    for (const Flow& f : dag.flows_of(coflows[c])) {
      if (f.src == g || f.dst == g) return true;
    }
    return false;
  };
  for (std::uint32_t t = 0; t < tasks.size(); ++t) {
    if (!owns(tasks[t].gpu)) continue;
    task_owned_[t] = true;
    ++pending_local_;
    for (const NodeRef dep : tasks[t].after) {
      dependents_[key(dep, tasks[t].gpu)].push_back({true, t});
      ++task_waiting_[t];
    }
  }
  for (std::uint32_t c = 0; c < coflows.size(); ++c) {
    const Coflow& coflow = coflows[c];
    // Flows left at each owned GPU it touches, and one sender group per owned sender.
    std::map<GpuId, std::vector<FlowId>> by_sender;
    for (std::uint32_t i = 0; i < coflow.flow_count; ++i) {
      const std::uint32_t f = coflow.first_flow + i;
      const Flow& flow = dag.flows()[f];
      for (const GpuId g : {flow.src, flow.dst}) {
        if (!owns(g)) continue;
        auto [it, fresh] = coflow_left_.try_emplace(key({NodeRef::Kind::kCoflow, c}, g), 0);
        if (fresh) ++pending_local_;
        ++it->second;
      }
      if (owns(flow.src)) by_sender[flow.src].push_back(FlowId{f});
    }
    for (auto& [gpu, flows] : by_sender) {
      const auto g = static_cast<std::uint32_t>(groups_.size());
      groups_.push_back({work::CoflowId{c}, gpu, std::move(flows)});
      std::uint32_t waiting = 0;
      for (const NodeRef dep : coflow.after) {
        const bool concerns = dep.kind == NodeRef::Kind::kTask ? tasks[dep.index].gpu == gpu
                                                               : touches(dep.index, gpu);
        if (!concerns) continue;
        dependents_[key(dep, gpu)].push_back({false, g});
        ++waiting;
      }
      group_waiting_.push_back(waiting);
    }
  }
}

void DependencyTracker::initial(Ready& out) const {
  for (std::uint32_t t = 0; t < dag_.tasks().size(); ++t) {
    if (task_owned_[t] && task_waiting_[t] == 0) out.tasks.push_back(TaskId{t});
  }
  for (std::uint32_t g = 0; g < groups_.size(); ++g) {
    if (group_waiting_[g] == 0) out.groups.push_back(SenderGroupId{g});
  }
}

void DependencyTracker::release(const Waiter& w, Ready& out) {
  if (w.is_task) {
    if (--task_waiting_[w.index] == 0) out.tasks.push_back(TaskId{w.index});
  } else {
    if (--group_waiting_[w.index] == 0) out.groups.push_back(SenderGroupId{w.index});
  }
}

void DependencyTracker::done_at(NodeRef node, GpuId g, Ready& out) {
  --pending_local_;
  const auto it = dependents_.find(key(node, g));
  if (it == dependents_.end()) return;
  for (const Waiter& w : it->second) release(w, out);
}

void DependencyTracker::task_done(TaskId task, Ready& out) {
  done_at({NodeRef::Kind::kTask, task}, dag_.tasks()[task].gpu, out);
}

void DependencyTracker::flow_done_at(GpuId g, work::CoflowId coflow, Ready& out) {
  const NodeRef node{NodeRef::Kind::kCoflow, coflow};
  if (--coflow_left_.at(key(node, g)) == 0) done_at(node, g, out);
}

}  // namespace shoal::exec
