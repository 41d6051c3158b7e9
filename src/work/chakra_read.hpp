// One rank file of a Chakra trace, read and checked on its own: its nodes with
// the fields and attributes Shoal models, dependencies resolved to indices,
// no cycle. What the file holds that Shoal does not model is counted into the
// summary. Private to the work layer (chakra_import.cpp uses it).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shoal/work/chakra_collectives.hpp"
#include "shoal/work/chakra_trace.hpp"

namespace shoal::work::chakra {

/// Chakra's NodeType, by its wire values.
enum class NodeKind : std::uint8_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kCompute = 4,
  kSend = 5,
  kRecv = 6,
  kCollective = 7,
  kStorage = 8,
  kBatch = 9,
  kCheckpoint = 10,
};
std::string_view node_kind_name(NodeKind kind);

/// The labels an exported trace carries ("shoal_type", "shoal_job", ...):
/// job, iteration, micro_batch, layer, stage.
struct ShoalLabels {
  std::string type;  // a coflow type ("EP") or a task kind ("forward")
  std::array<std::optional<std::uint32_t>, 5> numbers;
};

struct TraceNode {
  std::uint64_t id = 0;
  std::string name;
  NodeKind kind = NodeKind::kInvalid;
  std::vector<std::uint32_t> deps;  // indices into RankTrace::nodes, each once
  Time duration = 0;                // a compute node's, exact
  bool timed_by_ops = false;
  // Communication: the peer NPU, bytes and tag of a send or receive; the
  // kind, bytes and group of a collective.
  std::uint32_t peer = 0;
  Bytes bytes = 0;
  std::int64_t tag = 0;
  CollectiveKind collective = CollectiveKind::kAllReduce;
  std::string group;                             // pg_name ("" : every NPU)
  std::optional<CollectiveAlgorithm> algorithm;  // "shoal_algorithm"
  std::string coflow;                            // "shoal_coflow": the coflow a message belongs to
  std::optional<Time> start;                     // "shoal_start_ps"
  // Where a Shoal export had it: the task's or coflow's index in its Dag
  // ("shoal_index") and a send's flow's index in its coflow ("shoal_flow"),
  // so that the Dag read back numbers its nodes and flows as the one written.
  std::optional<std::uint64_t> index;
  std::optional<std::uint64_t> flow;
  ShoalLabels labels;
};

struct RankTrace {
  std::string path;
  std::vector<TraceNode> nodes;
};

/// Reads NPU `rank`'s file at `path` of a trace of `npus` NPUs. An Error names
/// the file and the node: an unknown node type, a duplicate id, a dependency
/// on a node the file lacks, a cycle, a message cut short, a communication
/// node without the attributes it needs or with a peer outside the trace.
RankTrace read_rank_trace(const std::string& path, std::uint32_t rank, std::uint32_t npus,
                          const ChakraOptions& options, ChakraSummary& summary);

/// Names of Shoal's own attributes, written by the export and read back.
inline constexpr std::string_view kDurationPs = "shoal_duration_ps";
inline constexpr std::string_view kCoflow = "shoal_coflow";
inline constexpr std::string_view kAlgorithm = "shoal_algorithm";
inline constexpr std::string_view kStartPs = "shoal_start_ps";
inline constexpr std::string_view kIndex = "shoal_index";
inline constexpr std::string_view kFlow = "shoal_flow";
inline constexpr std::string_view kType = "shoal_type";
inline constexpr std::array<std::string_view, 5> kLabelNames = {
    "shoal_job", "shoal_iteration", "shoal_micro_batch", "shoal_layer", "shoal_stage"};
/// The Chakra version Shoal was checked against, and the one it writes.
inline constexpr std::string_view kChakraVersion = "0.0.4";

}  // namespace shoal::work::chakra
