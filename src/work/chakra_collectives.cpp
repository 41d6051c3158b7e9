// The byte counts follow ASTRA-sim's Ring and direct (AllToAll) algorithms
// (astra-sim/system/.../collective_algorithm/Ring.cc): a ring all-reduce
// sends 2(N-1) messages of comm_size/N to its neighbour, a reduce-scatter N-1
// of comm_size/N, an all-gather N-1 of comm_size, an all-to-all N(N-1)/2 of
// comm_size/N, relayed through the neighbours. Shoal groups that relay into
// N-1 steps, step j carrying the (N-j) chunks still travelling: the same bytes
// per NPU, with one coflow per hop instead of one per message.
#include "shoal/work/chakra_collectives.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "shoal/core/error.hpp"

namespace shoal::work {

std::optional<CollectiveKind> collective_kind(std::int64_t comm_type) {
  if (comm_type < 0 || comm_type > static_cast<std::int64_t>(CollectiveKind::kBarrier)) {
    return std::nullopt;
  }
  return static_cast<CollectiveKind>(comm_type);
}

std::string_view collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kReduce:
      return "reduce";
    case CollectiveKind::kAllGather:
      return "all-gather";
    case CollectiveKind::kGather:
      return "gather";
    case CollectiveKind::kScatter:
      return "scatter";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllToAll:
      return "all-to-all";
    case CollectiveKind::kReduceScatter:
      return "reduce-scatter";
    case CollectiveKind::kReduceScatterBlock:
      return "reduce-scatter-block";
    case CollectiveKind::kBarrier:
      break;
  }
  return "barrier";
}

CollectiveAlgorithm parse_collective_algorithm(std::string_view text) {
  if (text == "ring") return CollectiveAlgorithm::kRing;
  if (text == "direct") return CollectiveAlgorithm::kDirect;
  throw Error("unknown collective algorithm \"" + std::string(text) + "\" (use ring or direct)");
}

std::string_view collective_algorithm_name(CollectiveAlgorithm algorithm) {
  return algorithm == CollectiveAlgorithm::kRing ? "ring" : "direct";
}

namespace {

Bytes times(Bytes bytes, std::int64_t count, CollectiveKind kind) {
  Bytes out = 0;
  if (__builtin_mul_overflow(bytes, count, &out)) {
    throw Error(std::string(collective_name(kind)) + " of " + std::to_string(bytes) +
                " bytes: a message would carry more than " +
                std::to_string(std::numeric_limits<Bytes>::max()) + " bytes");
  }
  return out;
}

/// Every position to the next around the ring, `bytes` each.
std::vector<Flow> ring_step(std::uint32_t n, Bytes bytes) {
  std::vector<Flow> flows;
  flows.reserve(n);
  for (std::uint32_t p = 0; p < n; ++p) flows.push_back({p, (p + 1) % n, bytes});
  return flows;
}

/// Every ordered pair of positions, `bytes` each.
std::vector<Flow> all_pairs(std::uint32_t n, Bytes bytes) {
  std::vector<Flow> flows;
  flows.reserve(std::size_t{n} * (n - 1));
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) {
      if (a != b) flows.push_back({a, b, bytes});
    }
  }
  return flows;
}

std::vector<std::vector<Flow>> ring_steps(CollectiveKind kind, std::uint32_t n, Bytes bytes) {
  const Bytes whole = std::max<Bytes>(1, bytes);
  const Bytes share = std::max<Bytes>(1, bytes / n);
  std::vector<std::vector<Flow>> steps;
  using K = CollectiveKind;
  switch (kind) {
    case K::kAllReduce:  // a reduce-scatter, then an all-gather of the reduced shares
      for (std::uint32_t j = 0; j < 2 * (n - 1); ++j) steps.push_back(ring_step(n, share));
      break;
    case K::kReduceScatter:
    case K::kReduceScatterBlock:
      for (std::uint32_t j = 0; j + 1 < n; ++j) steps.push_back(ring_step(n, share));
      break;
    case K::kAllGather:
      for (std::uint32_t j = 0; j + 1 < n; ++j) steps.push_back(ring_step(n, whole));
      break;
    case K::kBarrier:  // a one-byte token from everyone to everyone, as an all-gather
      for (std::uint32_t j = 0; j + 1 < n; ++j) steps.push_back(ring_step(n, 1));
      break;
    case K::kAllToAll:  // the chunks for j hops away travel j steps
      for (std::uint32_t j = 1; j < n; ++j)
        steps.push_back(ring_step(n, times(share, n - j, kind)));
      break;
    case K::kBroadcast:  // a chain from the root around the ring
      for (std::uint32_t j = 1; j < n; ++j) steps.push_back({{j - 1, j, whole}});
      break;
    case K::kScatter:  // the root's chain, each hop dropping one NPU's share
      for (std::uint32_t j = 1; j < n; ++j) {
        steps.push_back({{j - 1, j, times(whole, n - j, kind)}});
      }
      break;
    case K::kReduce:  // a chain from the root's neighbour back to the root
      for (std::uint32_t j = 1; j < n; ++j) steps.push_back({{j, (j + 1) % n, whole}});
      break;
    case K::kGather:  // the same chain, each hop adding one NPU's share
      for (std::uint32_t j = 1; j < n; ++j)
        steps.push_back({{j, (j + 1) % n, times(whole, j, kind)}});
      break;
  }
  return steps;
}

std::vector<Flow> direct_flows(CollectiveKind kind, std::uint32_t n, Bytes bytes) {
  const Bytes whole = std::max<Bytes>(1, bytes);
  const Bytes share = std::max<Bytes>(1, bytes / n);
  using K = CollectiveKind;
  std::vector<Flow> flows;
  switch (kind) {
    case K::kAllReduce:  // a share to each peer to reduce, and its reduced share back
      return all_pairs(n, times(share, 2, kind));
    case K::kReduceScatter:
    case K::kReduceScatterBlock:
    case K::kAllToAll:
      return all_pairs(n, share);
    case K::kAllGather:
      return all_pairs(n, whole);
    case K::kBarrier:
      return all_pairs(n, 1);
    case K::kBroadcast:
    case K::kScatter:
      for (std::uint32_t p = 1; p < n; ++p) flows.push_back({0, p, whole});
      break;
    case K::kReduce:
    case K::kGather:
      for (std::uint32_t p = 1; p < n; ++p) flows.push_back({p, 0, whole});
      break;
  }
  return flows;
}

}  // namespace

std::vector<std::vector<Flow>> collective_steps(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                                std::uint32_t members, Bytes bytes) {
  if (members < 2) return {};
  if (algorithm == CollectiveAlgorithm::kRing) return ring_steps(kind, members, bytes);
  return {direct_flows(kind, members, bytes)};
}

}  // namespace shoal::work
