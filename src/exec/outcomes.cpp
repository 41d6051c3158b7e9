#include "shoal/exec/outcomes.hpp"

#include <algorithm>

namespace shoal::exec {

CoflowOutcome coflow_outcome(const work::Dag& dag, const RunResults& r, work::CoflowId coflow) {
  const work::Coflow& c = dag.coflows()[coflow];
  CoflowOutcome o;
  for (std::uint32_t i = 0; i < c.flow_count; ++i) {
    const std::uint32_t f = c.first_flow + i;
    o.start = std::min(o.start, r.flow_start[f]);
    o.end = std::max(o.end, r.flow_end[f]);
    o.done = o.done && r.flow_end[f] >= 0;
    o.bytes += dag.flows()[f].bytes;
  }
  return o;
}

IterationTimes iteration_times(const work::Dag& dag, const RunResults& r,
                               const work::JobSpec& job) {
  const std::uint32_t n = job.parallel.iterations;
  IterationTimes t{std::vector<Time>(n, kTimeInfinity), std::vector<Time>(n, 0)};
  std::vector<bool> unfinished(n, false);
  for (std::size_t i = 0; i < dag.tasks().size(); ++i) {
    const work::TaskLabels& l = dag.tasks()[i].labels;
    if (l.kind == work::TaskKind::kOther || l.job != job.id) continue;
    t.start[l.iteration] = std::min(t.start[l.iteration], r.task_start[i]);
    t.end[l.iteration] = std::max(t.end[l.iteration], r.task_end[i]);
    if (r.task_end[i] < 0) unfinished[l.iteration] = true;
  }
  for (const work::Coflow& c : dag.coflows()) {
    if (c.labels.job != job.id || c.labels.iteration >= n) continue;
    for (std::uint32_t i = 0; i < c.flow_count; ++i) {
      const Time end = r.flow_end[c.first_flow + i];
      t.end[c.labels.iteration] = std::max(t.end[c.labels.iteration], end);
      if (end < 0) unfinished[c.labels.iteration] = true;
    }
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    if (t.start[i] == kTimeInfinity) t.start[i] = -1;
    if (unfinished[i]) t.end[i] = -1;
  }
  return t;
}

Time phase_end(const RunResults& r) {
  Time end = 0;
  for (const Time t : r.task_end) end = std::max(end, t);
  for (const Time t : r.flow_end) end = std::max(end, t);
  return end;
}

Time milestone_time(const work::Dag& dag, const RunResults& r, const std::string& at) {
  if (at == "phase-end") return phase_end(r);
  if (at == "last-byte") return *std::max_element(r.flow_end.begin(), r.flow_end.end());
  const auto dot = at.rfind('.');
  const bool start = at.substr(dot + 1) == "start";
  const work::NodeRef node = *dag.find(at.substr(0, dot));
  if (node.kind == work::NodeRef::Kind::kTask) {
    return start ? (r.task_start[node.index] == kTimeInfinity ? -1 : r.task_start[node.index])
                 : r.task_end[node.index];
  }
  const CoflowOutcome o = coflow_outcome(dag, r, work::CoflowId{node.index});
  if (start) return o.started() ? o.start : -1;
  return o.done ? o.end : -1;
}

}  // namespace shoal::exec
