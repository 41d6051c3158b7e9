// A Chakra collective (COMM_COLL_NODE) as Shoal's flows: the steps of ring or
// direct algorithms with ASTRA-sim's byte counts (docs/workloads.md, "Chakra",
// gives the table). `bytes` is the collective's comm_size, which ASTRA-sim reads
// as each NPU's input: the buffer an all-reduce reduces, the shard an
// all-gather contributes, the whole buffer an all-to-all exchanges.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "shoal/work/dag.hpp"

namespace shoal::work {

/// Chakra's CollectiveCommType, by its wire values.
enum class CollectiveKind : std::uint8_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};

/// The kind of a comm_type value; nullopt for a value Chakra does not define.
std::optional<CollectiveKind> collective_kind(std::int64_t comm_type);
/// "all-reduce", "reduce-scatter-block", ...
std::string_view collective_name(CollectiveKind kind);

/// `[workload] collective`: a chain of ring steps between neighbours, or one
/// coflow in which every NPU sends to the others directly.
enum class CollectiveAlgorithm : std::uint8_t { kRing, kDirect };

/// "ring" or "direct"; an Error names the choices.
CollectiveAlgorithm parse_collective_algorithm(std::string_view text);
std::string_view collective_algorithm_name(CollectiveAlgorithm algorithm);

/// The steps of a collective among `members` NPUs, each step one coflow's
/// flows, run one after the other. Flows are between positions 0..members-1:
/// the ring goes from each position to the next, and position 0 is the root of
/// a rooted collective (broadcast, reduce, gather, scatter). Every message
/// carries at least one byte (a flow is never empty; ASTRA-sim likewise raises
/// a collective smaller than its NPU count). Fewer than two members: no step.
/// An Error when a step's bytes would overflow.
std::vector<std::vector<Flow>> collective_steps(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                                std::uint32_t members, Bytes bytes);

}  // namespace shoal::work
