// Every coflow's results, merged from the ranks that hold it, a block of
// coflows at a time: a rank holds only the coflows its GPUs send or receive
// in (work::Dag::drop_unheld_coflows), so no rank holds every coflow, and
// none holds more than a block of their rows.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "shoal/core/comm.hpp"
#include "shoal/core/units.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::exec {

class Recorder;

/// A coflow's row: what its DAG says of it, and its times over every rank.
struct CoflowRow {
  std::uint32_t id = 0;
  work::CoflowLabels labels;
  std::uint32_t flow_count = 0;
  Bytes bytes = 0;
  Time start = kTimeInfinity;  // its first flow's start (kTimeInfinity: none started)
  Time end = -1;               // its last finished flow's end (-1: none finished)
  std::uint64_t flows_ended = 0;
  std::uint32_t key = 0;  // its priority key and class, where given
  std::uint8_t cls = 0;
  std::string_view name;  // where asked for: valid during the block's call
};

struct CoflowRowOptions {
  /// By held coflow (sched::CoflowPriorities): left empty, the rows carry 0.
  std::span<const std::uint32_t> key;
  std::span<const std::uint8_t> cls;
  bool names = false;
  std::size_t block = 4096;  // coflows per block
};

/// Collective over `comm`: calls `each_block` on every rank, once per block
/// of coflows in CoflowId order, the same number of times everywhere, with
/// the block's merged rows on rank 0 and none elsewhere.
void merge_coflow_rows(const core::Comm& comm, const work::Dag& dag, const Recorder& recorder,
                       const CoflowRowOptions& options,
                       const std::function<void(std::span<const CoflowRow>)>& each_block);

}  // namespace shoal::exec
