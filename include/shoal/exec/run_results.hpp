// What a run produced, gathered onto rank 0 (exec::Recorder::results).
#pragma once

#include <cstdint>
#include <vector>

#include "shoal/core/units.hpp"
#include "shoal/topo/ids.hpp"

namespace shoal::exec {

/// Per-coflow and per-task times (per-flow ones on request), per-GPU and
/// per-link figures.
struct RunResults {
  // By flow, with RecorderOptions::flow_times (else empty):
  std::vector<Time> flow_start;  // when the flow became ready at its sender
  std::vector<Time> flow_end;    // last byte at the receiver; -1 if never
  // By coflow: its first flow's start (kTimeInfinity: none started), its last
  // finished flow's end (-1: none finished), and how many of its flows finished.
  std::vector<Time> coflow_start, coflow_end;
  std::vector<std::uint64_t> coflow_flows_ended;
  std::vector<Time> task_start, task_end;
  std::vector<Time> gpu_busy;       // by GPU: time computing
  std::vector<Time> gpu_comm_wait;  // by GPU: time idle until a coflow made a task ready
  // The same split by the iteration label of the task that became ready:
  // by GPU * iterations + iteration.
  std::vector<Time> gpu_iteration_wait;
  std::uint32_t iterations = 1;
  std::int64_t bytes_delivered = 0;
  std::int64_t cell_hops = 0;  // cells sent over a link (one per cell and link crossed)
  // When recording, on rank 0: by link, bytes per class (link * 8 + class) and busy time.
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
