#include "run_measures.hpp"

#include <algorithm>

namespace shoal::cli {

CoflowOutcome coflow_outcome(const work::Dag& dag, const net::RunResults& r, std::uint32_t coflow) {
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

IterationTimes iteration_times(const work::Dag& dag, const net::RunResults& r,
                               const work::JobSpec& job) {
  const std::uint32_t n = job.parallel.iterations;
  IterationTimes t{std::vector<Time>(n, kTimeInfinity), std::vector<Time>(n, 0)};
  for (std::size_t i = 0; i < dag.tasks().size(); ++i) {
    const work::TaskLabels& l = dag.tasks()[i].labels;
    if (l.kind == work::TaskKind::kOther || l.job != job.id) continue;
    t.start[l.iteration] = std::min(t.start[l.iteration], r.task_start[i]);
    t.end[l.iteration] = std::max(t.end[l.iteration], r.task_end[i]);
  }
  for (const work::Coflow& c : dag.coflows()) {
    if (c.labels.job != job.id || c.labels.iteration >= n) continue;
    for (std::uint32_t i = 0; i < c.flow_count; ++i) {
      t.end[c.labels.iteration] = std::max(t.end[c.labels.iteration], r.flow_end[c.first_flow + i]);
    }
  }
  return t;
}

}  // namespace shoal::cli
