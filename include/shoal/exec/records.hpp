// Rows the recorder keeps for the output file as the run goes (flows when
// their sender learns they are done, compute tasks when they end), so they
// can be written in pieces instead of held to the end.
#pragma once

#include <cstdint>

namespace shoal::exec {

struct FlowRecord {
  std::uint32_t id;
  std::uint32_t coflow;
  std::uint32_t src_gpu;
  std::uint32_t dst_gpu;
  std::int64_t bytes;
  std::int64_t start_ps;  // -1: never started
  std::int64_t end_ps;    // -1: not known done at its sender by the end
};

struct ComputeRecord {
  std::uint32_t task;
  std::uint32_t gpu;
  std::uint32_t job;
  std::uint32_t iteration;
  std::uint32_t micro_batch;
  std::uint32_t layer;
  std::uint8_t kind;  // work::TaskKind
  std::int64_t start_ps;
  std::int64_t end_ps;
};

}  // namespace shoal::exec
