// What a run produced, gathered onto rank 0 (exec::Recorder::results).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "shoal/core/units.hpp"
#include "shoal/topo/ids.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::exec {

struct CoflowOutcome {
  Time start = kTimeInfinity;  // its first flow's start (kTimeInfinity: none started)
  Time end = 0;                // its last flow's end
  bool done = true;            // every flow finished
  Bytes bytes = 0;
  bool started() const { return start != kTimeInfinity; }
  Time cct() const { return done && started() ? end - start : -1; }
  bool operator==(const CoflowOutcome&) const = default;
};

/// What the reports take from every coflow's merged row (exec/coflow_rows.hpp),
/// on rank 0: no rank keeps every coflow's times for them.
struct CoflowSummary {
  /// The finished coflows' CCTs by type, in CoflowId order.
  std::array<std::vector<Time>, work::kCoflowTypes> ccts;
  struct IterationEnd {
    Time end = -1;            // its coflows' last flow end
    bool unfinished = false;  // one of its coflows did not finish
    bool operator==(const IterationEnd&) const = default;
  };
  /// By (job, iteration) label.
  std::map<std::pair<std::uint32_t, std::uint32_t>, IterationEnd> iterations;
  std::uint64_t unfinished_flows = 0;
  Time last_end = -1;  // the last flow end (-1: none ended)
  /// RecorderOptions::watched_coflows' outcomes, in its order.
  std::vector<std::uint32_t> watched;
  std::vector<CoflowOutcome> watched_outcomes;
  bool operator==(const CoflowSummary&) const = default;
};

/// Per-coflow and per-task times (per-flow ones on request), per-GPU and
/// per-link figures.
struct RunResults {
  // By flow, with RecorderOptions::flow_times (else empty):
  std::vector<Time> flow_start;  // when the flow became ready at its sender
  std::vector<Time> flow_end;    // last byte at the receiver; -1 if never
  // By CoflowId, with RecorderOptions::coflow_times (else empty): its first
  // flow's start (kTimeInfinity: none started), its last finished flow's end
  // (-1: none finished), and how many of its flows finished.
  std::vector<Time> coflow_start, coflow_end;
  std::vector<std::uint64_t> coflow_flows_ended;
  CoflowSummary coflows;
  // By task, with RecorderOptions::task_times (else empty): its start
  // (kTimeInfinity: never started) and end (-1: never ended).
  std::vector<Time> task_start, task_end;
  // By training job label * task_iterations + iteration, over the training
  // tasks (not TaskKind::kOther): the first start (kTimeInfinity: none), the
  // last end, and 1 where one never ended.
  std::vector<Time> job_iteration_start, job_iteration_end, job_iteration_unfinished;
  std::uint32_t task_iterations = 0;  // Dag::task_iterations
  Time last_task_end = -1;
  std::int64_t first_unfinished_task = -1;  // the lowest TaskId that never ended (-1: none)
  // RecorderOptions::watched_tasks' starts and ends, in its order.
  std::vector<std::uint32_t> watched_tasks;
  std::vector<Time> watched_start, watched_end;
  std::vector<Time> gpu_busy;       // by GPU: time computing
  std::vector<Time> gpu_comm_wait;  // by GPU: time idle until a coflow made a task ready
  // The same split by the iteration label of the task that became ready:
  // by GPU * iterations + iteration.
  std::vector<Time> gpu_iteration_wait;
  std::uint32_t iterations = 1;
  std::int64_t bytes_delivered = 0;
  std::int64_t cell_hops = 0;  // cells sent over a link (one per cell and link crossed)
  // Notes that told a rank the destination of a cell whose flow it does not hold.
  std::int64_t routes_noted = 0;
  // When recording, the links in blocks of kLinkBlock, block b summed onto
  // rank b % ranks (link_block_rank), so that no rank holds every link's: this
  // rank's blocks end to end, bytes per class (link * 8 + class) and busy time.
  static constexpr std::uint32_t kLinkBlock = 4096;
  static int link_block_rank(std::size_t block, int ranks) {
    return static_cast<int>(block % static_cast<std::size_t>(ranks));
  }
  std::vector<std::uint64_t> link_bytes;
  std::vector<std::uint64_t> link_busy;
  // With /link_util bins, on rank 0: the busiest links (by bytes) and, per
  // link, bytes sent in each bin (link_util_links.size() x link_util_bins values).
  std::vector<topo::LinkId> link_util_links;
  std::uint64_t link_util_bins = 0;
  Time link_util_width = 0;  // on every rank: the bins' width, link_util_bin times a power of two
  std::vector<std::uint64_t> link_util_bytes;
};

}  // namespace shoal::exec
