// What a cell head's event carries in its 64-bit payload, packed and unpacked
// in this one place:
//
//   bits 32-63  flow
//   bit  31     slow: sent while its link was perturbed (the receiver computes
//               its tail at the rate it was sent at)
//   bits 28-30  hop: the links it crossed before this one (at most kMaxHops - 1)
//   bit  27     last: the flow's last cell, counted where its link starts
//   bits 24-26  switch class
//   bits 0-23   bytes - 1 (a cell holds 1 B to kMaxCell = 16 MiB)
#pragma once

#include <cstdint>

#include "shoal/core/units.hpp"

namespace shoal::net {

inline constexpr Bytes kMaxCell = Bytes{1} << 24;  // a cell's size travels in 24 bits, less one
/// Links a cell head counts; a longer path (a detour around failures) stays at the last.
inline constexpr std::uint32_t kMaxHops = 8;

struct CellHead {
  std::uint32_t flow = 0;
  Bytes bytes = 0;  // 1 to kMaxCell
  int cls = 0;      // 0 to 7
  std::uint32_t hop = 0;
  bool slow = false;
  bool last = false;

  std::uint64_t pack() const {
    return (std::uint64_t{flow} << 32) | (std::uint64_t{slow} << 31) |
           (std::uint64_t{hop < kMaxHops ? hop : kMaxHops - 1} << 28) |
           (std::uint64_t{last} << 27) | (static_cast<std::uint64_t>(cls) << 24) |
           static_cast<std::uint64_t>(bytes - 1);
  }
  static CellHead unpack(std::uint64_t payload) {
    return {static_cast<std::uint32_t>(payload >> 32),
            static_cast<Bytes>(payload & 0xFFFFFF) + 1,
            static_cast<int>((payload >> 24) & 7),
            static_cast<std::uint32_t>((payload >> 28) & 7),
            ((payload >> 31) & 1) != 0,
            ((payload >> 27) & 1) != 0};
  }
  /// The fields the prefetch stages read, without unpacking the rest.
  static std::uint32_t flow_of(std::uint64_t payload) {
    return static_cast<std::uint32_t>(payload >> 32);
  }
  static int class_of(std::uint64_t payload) { return static_cast<int>((payload >> 24) & 7); }
  static std::uint32_t hop_of(std::uint64_t payload) {
    return static_cast<std::uint32_t>((payload >> 28) & 7);
  }
};

}  // namespace shoal::net
