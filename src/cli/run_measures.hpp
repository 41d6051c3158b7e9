// What the reports and the output file derive from a run's results, in one
// place: a coflow's start, end and CCT, and a training job's iteration times.
#pragma once

#include <cstdint>
#include <vector>

#include "shoal/net/network.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::cli {

struct CoflowOutcome {
  Time start = kTimeInfinity;  // its first flow's start (kTimeInfinity: none started)
  Time end = 0;                // its last flow's end
  bool done = true;            // every flow finished
  Bytes bytes = 0;
  bool started() const { return start != kTimeInfinity; }
  Time cct() const { return done && started() ? end - start : -1; }
};

CoflowOutcome coflow_outcome(const work::Dag& dag, const net::RunResults& r, std::uint32_t coflow);

/// Per iteration of a job: its first task's start, and its end (its last task
/// or coflow, the parameter all-gathers included).
struct IterationTimes {
  std::vector<Time> start, end;
};

IterationTimes iteration_times(const work::Dag& dag, const net::RunResults& r,
                               const work::JobSpec& job);

}  // namespace shoal::cli
