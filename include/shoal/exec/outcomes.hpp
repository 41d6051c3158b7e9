// What the reports and the output file derive from a run's results, in one
// place: a coflow's start, end and CCT, a training job's iteration times, the
// phase's end and the milestones a config names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shoal/exec/coflow_rows.hpp"
#include "shoal/exec/run_results.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::exec {

CoflowOutcome coflow_outcome(const CoflowRow& row);
/// Adds a block of merged rows (merge_coflow_rows) to `summary`, with the
/// outcomes of the coflows it watches.
void summarize(std::span<const CoflowRow> rows, CoflowSummary& summary);

/// Per iteration of a job: its first task's start (-1: none started), and its
/// end, its last task or coflow, the parameter all-gathers included (-1 until
/// every one of them finished: a stopped or cut-short run).
struct IterationTimes {
  std::vector<Time> start, end;
};

IterationTimes iteration_times(const RunResults& r, const work::JobSpec& job);

/// The last task or flow end.
Time phase_end(const RunResults& r);
/// The last flow end (-1: none ended).
Time last_byte(const RunResults& r);
/// Flows that did not finish.
std::uint64_t unfinished_flows(const RunResults& r);

/// A time the report names: "NAME.start" / "NAME.end" of a task or coflow,
/// "phase-end" (the last task or flow end) or "last-byte" (the last flow end).
struct Milestone {
  std::string label;
  std::string at;
  /// The task or coflow `at` names, found when the config was read
  /// (read_milestones, or in a fragment find_milestones): the DAG's names
  /// are dropped before the run.
  std::optional<work::NodeRef> node;
  /// "config FILE: milestone[i]", for the error where no rank finds it.
  std::string entry;
};

/// The milestone's time, or -1 if it was not reached.
Time milestone_time(const RunResults& r, const Milestone& m);

}  // namespace shoal::exec
