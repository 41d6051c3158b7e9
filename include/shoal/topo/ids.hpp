// The ids of a fabric's parts, the one definition each: nodes (the engine's
// entities), directed links and GPUs.
#pragma once

#include <cstdint>

namespace shoal::topo {

using NodeId = std::uint32_t;
using LinkId = std::uint32_t;
inline constexpr LinkId kNoLink = UINT32_MAX;
/// A GPU's number, 0 to the fabric's GPU count - 1 (its node is Fabric::gpu_node).
using GpuId = std::uint32_t;
/// GPU ids stay below 2^24: every GPU is an engine entity, and the event key
/// holds 24 bits of entity id (core/event.hpp).
inline constexpr GpuId kMaxGpuId = (GpuId{1} << 24) - 1;

}  // namespace shoal::topo
