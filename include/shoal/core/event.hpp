// The event and its total, partition-independent order.
#pragma once

#include <cstdint>

#include "shoal/core/units.hpp"

namespace shoal::core {

/// Dense global entity id, fixed by the model and independent of the partition.
using EntityId = std::uint32_t;

/// Bits of the tiebreak word: the source entity in the high bits, its own send
/// counter in the low bits, so one unsigned compare orders (source, sequence).
inline constexpr int kSequenceBits = 40;
inline constexpr std::uint64_t kMaxSequence = (std::uint64_t{1} << kSequenceBits) - 1;
inline constexpr std::uint64_t kMaxEntities = std::uint64_t{1} << (64 - kSequenceBits);

constexpr std::uint64_t make_tiebreak(EntityId source, std::uint64_t sequence) {
  return (std::uint64_t{source} << kSequenceBits) | sequence;
}

/// A source's events come in streams, each numbered on its own: stream 0 by
/// the engine as the source sends them, streams 1 to 3 by the model
/// (Simulator::send_from), e.g. a GPU's port numbering its n-th cell's events
/// whenever it sends them. The stream is the top bits of the sequence, so the
/// key orders by (time, source, stream, number).
inline constexpr int kStreamBits = 2;
inline constexpr std::uint32_t kStreams = 1u << kStreamBits;
inline constexpr int kStreamShift = kSequenceBits - kStreamBits;
inline constexpr std::uint64_t kMaxStreamSequence = (std::uint64_t{1} << kStreamShift) - 1;

constexpr std::uint64_t make_tiebreak(EntityId source, std::uint32_t stream,
                                      std::uint64_t sequence) {
  return (std::uint64_t{source} << kSequenceBits) | (std::uint64_t{stream} << kStreamShift) |
         sequence;
}

/// 32 bytes, two to a cache line. Events are ordered by (time, source, sequence):
/// every field of that key is fixed by the sender's own history, so the order is
/// the same whatever rank holds either entity.
struct Event {
  Time time = 0;
  std::uint64_t tiebreak = 0;  // make_tiebreak(source, sequence)
  EntityId target = 0;
  std::uint32_t tag = 0;      // the model's event kind
  std::uint64_t payload = 0;  // the model's data

  constexpr EntityId source() const { return static_cast<EntityId>(tiebreak >> kSequenceBits); }
  constexpr std::uint64_t sequence() const { return tiebreak & kMaxSequence; }
};
static_assert(sizeof(Event) == 32);

/// Strict weak (in fact total, for distinct events) order of the event key.
constexpr bool before(const Event& a, const Event& b) {
  return a.time < b.time || (a.time == b.time && a.tiebreak < b.tiebreak);
}

/// before(a, b) as one 128-bit compare, for times that are not negative (a
/// queued event's never is): where many events share a time (a bucket, an
/// atom's sub-window), a branch on the times mispredicts half the time.
inline bool key_before(const Event& a, const Event& b) {
  const auto key = [](const Event& e) {
    return (static_cast<unsigned __int128>(static_cast<std::uint64_t>(e.time)) << 64) | e.tiebreak;
  };
  return key(a) < key(b);
}

}  // namespace shoal::core
