#include "shoal/exec/outcomes.hpp"

#include <algorithm>
#include <string>

#include "shoal/core/error.hpp"

namespace shoal::exec {

CoflowOutcome coflow_outcome(const work::Dag& dag, const RunResults& r, work::CoflowId coflow) {
  const work::Coflow& c = dag.coflows()[coflow];
  CoflowOutcome o;
  o.start = r.coflow_start[coflow];
  o.end = std::max<Time>(0, r.coflow_end[coflow]);
  o.done = r.coflow_flows_ended[coflow] == c.flow_count;
  o.bytes = c.bytes;  // also where the rank no longer holds its flows
  return o;
}

IterationTimes iteration_times(const work::Dag& dag, const RunResults& r,
                               const work::JobSpec& job) {
  const std::uint32_t n = job.parallel.iterations;
  IterationTimes t{std::vector<Time>(n, kTimeInfinity), std::vector<Time>(n, 0)};
  std::vector<bool> unfinished(n, false);
  // The recorder reduced the tasks' times per job and iteration.
  const std::size_t first = std::size_t{job.id} * r.task_iterations;
  for (std::uint32_t i = 0; i < std::min(n, r.task_iterations); ++i) {
    if (first + i >= r.job_iteration_start.size()) break;
    t.start[i] = std::min(t.start[i], r.job_iteration_start[first + i]);
    t.end[i] = std::max(t.end[i], r.job_iteration_end[first + i]);
    if (r.job_iteration_unfinished[first + i] != 0) unfinished[i] = true;
  }
  for (std::uint32_t c = 0; c < dag.coflows().size(); ++c) {
    const work::CoflowLabels& l = dag.coflows()[c].labels;
    if (l.job != job.id || l.iteration >= n) continue;
    t.end[l.iteration] = std::max(t.end[l.iteration], r.coflow_end[c]);
    if (r.coflow_flows_ended[c] != dag.coflows()[c].flow_count) unfinished[l.iteration] = true;
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    if (t.start[i] == kTimeInfinity) t.start[i] = -1;
    if (unfinished[i]) t.end[i] = -1;
  }
  return t;
}

Time last_byte(const RunResults& r) {
  Time end = -1;
  for (const Time t : r.coflow_end) end = std::max(end, t);
  return end;
}

Time phase_end(const RunResults& r) { return std::max({Time{0}, last_byte(r), r.last_task_end}); }

std::uint64_t unfinished_flows(const work::Dag& dag, const RunResults& r) {
  std::uint64_t left = 0;
  for (std::uint32_t c = 0; c < dag.coflows().size(); ++c)
    left += dag.coflows()[c].flow_count - r.coflow_flows_ended[c];
  return left;
}

Time milestone_time(const work::Dag& dag, const RunResults& r, const Milestone& m) {
  if (m.at == "phase-end") return phase_end(r);
  if (m.at == "last-byte") return last_byte(r);
  if (!m.node) throw Error("internal: milestone " + m.at + " was not found in the workload");
  const bool start = m.at.substr(m.at.rfind('.') + 1) == "start";
  const work::NodeRef node = *m.node;
  if (node.kind == work::NodeRef::Kind::kTask) {
    // Watched where the run kept no task's times (RecorderOptions::watched_tasks).
    const auto it = std::find(r.watched_tasks.begin(), r.watched_tasks.end(), node.index);
    const bool watched = it != r.watched_tasks.end();
    if (!watched && r.task_start.empty()) {
      throw Error("internal: a milestone on task " + m.at.substr(0, m.at.rfind('.')) +
                  ", which the run did not watch");
    }
    const std::size_t i = watched ? static_cast<std::size_t>(it - r.watched_tasks.begin()) : 0;
    const Time begun = watched ? r.watched_start[i] : r.task_start[node.index];
    const Time ended = watched ? r.watched_end[i] : r.task_end[node.index];
    return start ? (begun == kTimeInfinity ? -1 : begun) : ended;
  }
  const CoflowOutcome o = coflow_outcome(dag, r, work::CoflowId{node.index});
  if (start) return o.started() ? o.start : -1;
  return o.done ? o.end : -1;
}

}  // namespace shoal::exec
