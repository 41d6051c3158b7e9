// What an event's 32-bit tag and 64-bit payload carry, packed and unpacked in
// this one place (a cell head's payload: net/cell_head.hpp).
//
//   tag   bits 0-3   kind: 0-7 the network's (NetEvent), 8-15 the model's
//                    above it (exec/executor.hpp)
//         bits 4-31  the link it concerns (the network's kinds that have one)
//   payload of kCredit        class << 32 | bytes
//   payload of kFlowReceived, kFlowAck, kPromote   the flow
//   payload of kRoute         flow << 32 | destination GPU (a note, never queued)
#pragma once

#include <cstdint>

#include "shoal/core/units.hpp"
#include "shoal/topo/ids.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::net {

/// The network's events, each at one node.
enum class NetEvent : std::uint32_t {
  kCellHead = 0,      // a cell's head at a node via a link (payload: CellHead)
  kPortFree = 1,      // a port finished a cell and cells wait: at the sending node
  kCredit = 2,        // credit back at the upstream node of a link
  kFlowReceived = 3,  // a flow's last byte at its receiver
  kFlowAck = 4,       // its acknowledgement at the sender, after the path's latency
  kLinkFailed = 5,    // at the link's source: its cells and flows are re-routed
  kPromote = 6,       // the starvation guard: a flow waiting too long goes first at its NIC
  kRoute = 7,         // a note: the destination of a cell that comes to a rank not holding its flow
};
/// Kinds from this one on belong to the model that runs on the network.
inline constexpr std::uint32_t kFirstModelEvent = 8;
inline constexpr std::uint32_t kEventKinds = 16;

struct EventTag {
  std::uint32_t kind = 0;
  topo::LinkId link = 0;

  static constexpr std::uint32_t pack(std::uint32_t kind, topo::LinkId link = 0) {
    return kind | (link << 4);
  }
  static constexpr std::uint32_t pack(NetEvent kind, topo::LinkId link = 0) {
    return pack(static_cast<std::uint32_t>(kind), link);
  }
  static constexpr std::uint32_t kind_of(std::uint32_t tag) { return tag & 15; }
  static constexpr topo::LinkId link_of(std::uint32_t tag) { return tag >> 4; }
  static constexpr bool is_network(std::uint32_t tag) { return kind_of(tag) < kFirstModelEvent; }
};

/// Credit returned to a port: its class and bytes.
struct CreditPayload {
  int cls = 0;
  Bytes bytes = 0;  // at most the buffer of a class, below 2^32

  constexpr std::uint64_t pack() const {
    return (static_cast<std::uint64_t>(cls) << 32) | static_cast<std::uint64_t>(bytes);
  }
  static constexpr CreditPayload unpack(std::uint64_t payload) {
    return {static_cast<int>(payload >> 32), static_cast<Bytes>(payload & 0xFFFFFFFF)};
  }
};

/// A payload that is a flow.
constexpr std::uint64_t flow_payload(work::FlowId flow) { return std::uint32_t{flow}; }
constexpr work::FlowId flow_of_payload(std::uint64_t payload) {
  return work::FlowId{static_cast<std::uint32_t>(payload)};
}

/// A note's route: a flow and its destination.
struct RoutePayload {
  work::FlowId flow{};
  work::GpuId dst = 0;

  constexpr std::uint64_t pack() const { return (std::uint64_t{flow} << 32) | dst; }
  static constexpr RoutePayload unpack(std::uint64_t payload) {
    return {work::FlowId{static_cast<std::uint32_t>(payload >> 32)},
            static_cast<work::GpuId>(payload & 0xFFFFFFFF)};
  }
};

}  // namespace shoal::net
