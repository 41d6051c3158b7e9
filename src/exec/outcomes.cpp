#include "shoal/exec/outcomes.hpp"

#include <algorithm>
#include <string>

#include "shoal/core/error.hpp"

namespace shoal::exec {

CoflowOutcome coflow_outcome(const CoflowRow& row) {
  CoflowOutcome o;
  o.start = row.start;
  o.end = std::max<Time>(0, row.end);
  o.done = row.flows_ended == row.flow_count;
  o.bytes = row.bytes;  // also where no rank holds its flows any more
  return o;
}

void summarize(std::span<const CoflowRow> rows, CoflowSummary& summary) {
  for (const CoflowRow& row : rows) {
    const CoflowOutcome o = coflow_outcome(row);
    if (const Time cct = o.cct(); cct >= 0) {
      summary.ccts[static_cast<std::size_t>(row.labels.type)].push_back(cct);
    }
    CoflowSummary::IterationEnd& it = summary.iterations[{row.labels.job, row.labels.iteration}];
    it.end = std::max(it.end, row.end);
    if (!o.done) it.unfinished = true;
    summary.unfinished_flows += row.flow_count - row.flows_ended;
    summary.last_end = std::max(summary.last_end, row.end);
    const auto w = std::lower_bound(summary.watched.begin(), summary.watched.end(), row.id);
    if (w != summary.watched.end() && *w == row.id) {
      summary.watched_outcomes[static_cast<std::size_t>(w - summary.watched.begin())] = o;
    }
  }
}

IterationTimes iteration_times(const RunResults& r, const work::JobSpec& job) {
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
  const auto& coflows = r.coflows.iterations;
  for (auto it = coflows.lower_bound({job.id, 0}); it != coflows.end() && it->first.first == job.id;
       ++it) {
    const std::uint32_t i = it->first.second;
    if (i >= n) break;
    t.end[i] = std::max(t.end[i], it->second.end);
    if (it->second.unfinished) unfinished[i] = true;
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    if (t.start[i] == kTimeInfinity) t.start[i] = -1;
    if (unfinished[i]) t.end[i] = -1;
  }
  return t;
}

Time last_byte(const RunResults& r) { return r.coflows.last_end; }

Time phase_end(const RunResults& r) { return std::max({Time{0}, last_byte(r), r.last_task_end}); }

std::uint64_t unfinished_flows(const RunResults& r) { return r.coflows.unfinished_flows; }

Time milestone_time(const RunResults& r, const Milestone& m) {
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
  const std::vector<std::uint32_t>& watched = r.coflows.watched;
  const auto it = std::lower_bound(watched.begin(), watched.end(), node.index);
  if (it == watched.end() || *it != node.index) {
    throw Error("internal: a milestone on coflow " + m.at.substr(0, m.at.rfind('.')) +
                ", which the run did not watch");
  }
  const CoflowOutcome o =
      r.coflows.watched_outcomes[static_cast<std::size_t>(it - watched.begin())];
  if (start) return o.started() ? o.start : -1;
  return o.done ? o.end : -1;
}

}  // namespace shoal::exec
