// The ids of a DAG's GPUs, flows, tasks and coflows, and a reference to a node
// (a task or a coflow), apart from the DAG so that its parts can name them.
#pragma once

#include <cstdint>

#include "shoal/core/dense_id.hpp"
#include "shoal/topo/ids.hpp"

namespace shoal::work {

using topo::GpuId;
using topo::kMaxGpuId;
/// A flow, by its place among all the DAG's flows (Dag::all_flows); a coflow's flows
/// are consecutive. A rank that holds only some (Dag::set_fragment) keeps the ids.
using FlowId = core::DenseId<struct FlowTag>;
/// A compute task, by the order tasks were added (Dag::task); a rank that
/// holds only some keeps the ids.
using TaskId = core::DenseId<struct TaskTag>;
/// A coflow, by its index in Dag::coflows().
using CoflowId = core::DenseId<struct CoflowTag>;

/// A node of the DAG: a task or a coflow, by index in its own list.
struct NodeRef {
  enum class Kind : std::uint8_t { kTask, kCoflow };
  Kind kind = Kind::kTask;
  std::uint32_t index = 0;
  friend bool operator==(const NodeRef&, const NodeRef&) = default;
};

}  // namespace shoal::work
