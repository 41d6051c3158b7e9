// The Hermod digest's Panel 1 as a workload: one Case II moment on one GPU's
// link. GPU `sender` sends to GPU `receiver` (the link into the receiver is the
// shared one), all coflows ready at t = 0 unless chained:
//   ep-mb1, ep-mb2          EP, micro-batches 0 and 1, layer n
//   pp-mb1, pp-mb2          PP, each after its micro-batch's EP (same labels)
//   dp-layer-n, dp-layer-n-1 DP of layers n and n-1 (micro-batch label 1, the last)
//   compute-mb1             on the receiver, after pp-mb1 (a micro-batch can compute
//                           when its PP coflow ends)
//   compute-mb2             after pp-mb2 and compute-mb1 (micro-batch 1's work first)
// The phase ends when both computes and all DP are done.
#pragma once

#include <cstdint>

#include "shoal/core/units.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::work {

struct CaseIiPanel {
  Bytes ep_bytes = 32'000'000;   // per micro-batch
  Bytes pp_bytes = 6'000'000;    // HPN's measured PP message (the digest's default)
  Bytes dp_bytes = 128'000'000;  // per layer
  Time compute = 3'000'000'000;  // each micro-batch's remaining compute: 3 ms
  std::uint32_t layer = 12;      // n
  GpuId sender = 0;
  GpuId receiver = 1;
};

/// Adds the panel's tasks and coflows to `dag` and resolves it.
void add_case_ii_panel(const CaseIiPanel& panel, Dag& dag);

}  // namespace shoal::work
