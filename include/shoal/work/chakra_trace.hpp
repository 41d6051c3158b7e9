// Chakra execution traces (MLCommons Chakra, as ASTRA-sim reads them) into a
// Dag, and a Dag out as one. A trace "DIR/NAME" is the files NAME.0.et ...
// NAME.(N-1).et in DIR, one per NPU; docs/workloads.md ("Chakra") says how each
// node becomes tasks and coflows:
// - COMP_NODE: a compute task (duration_micros, the exact "shoal_duration_ps"
//   when it agrees with it, or num_ops at the [gpu] rate when one is given);
// - COMM_SEND_NODE / COMM_RECV_NODE: matched by (source, destination, tag) into
//   one flow, a coflow of its own (or of its "shoal_coflow" group);
// - COMM_COLL_NODE: matched across the files by order of appearance per
//   (pg_name, comm_type), a chain of ring steps or one direct coflow;
// - the other node types: zero-time tasks that keep their dependencies.
// Every attribute or field Shoal does not model is counted in the summary.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "shoal/work/chakra_collectives.hpp"
#include "shoal/work/dag.hpp"

namespace shoal::work {

struct ChakraOptions {
  /// How collectives become flows, unless a node's "shoal_algorithm" says.
  CollectiveAlgorithm collective = CollectiveAlgorithm::kRing;
  /// NPU i runs on GPU gpus[i]; empty: NPU i is GPU i.
  std::vector<GpuId> gpus;
  /// A COMP_NODE's num_ops run at this rate when it is not 0; else its duration.
  double flops_per_second = 0;
};

/// What an import read and what it made of it.
struct ChakraSummary {
  std::string trace;  // as it was named: DIR/NAME
  std::uint32_t npus = 0;
  std::uint64_t nodes = 0;
  std::uint64_t compute = 0;                         // COMP_NODEs
  std::uint64_t compute_from_ops = 0;                // of those, timed by num_ops
  std::uint64_t messages = 0;                        // matched send/receive pairs
  std::map<std::string, std::uint64_t> collectives;  // by kind ("all-reduce")
  std::uint64_t single_npu_collectives = 0;          // no traffic: zero-time tasks
  std::uint64_t coflows = 0;
  std::uint64_t join_tasks = 0;  // a receive or collective that waits at its receiver
  std::map<std::string, std::uint64_t> zero_time;     // by node type ("METADATA_NODE")
  std::map<std::string, std::uint64_t> not_modelled;  // "attribute tensor_size": nodes
  std::vector<std::string> unknown_versions;          // GlobalMetadata versions not 0.0.4

  /// One line: NPUs, nodes, what they became, and what was not modelled.
  std::string line() const;
};

/// The rank files of the trace `prefix` (DIR/NAME), as names like the prefix:
/// NAME.0.et, NAME.1.et, ... as many consecutive ones as exist, tested at the
/// path `locate` gives a name. An Error when there is none, or when a higher
/// NAME.K.et exists past the first one missing (a hole in the ranks).
std::vector<std::string> chakra_rank_names(
    const std::string& prefix, const std::function<std::string(const std::string&)>& locate);

/// Appends the trace whose rank files are `paths` (NPU i's at paths[i]) to
/// `dag` and resolves it; `prefix` names it in messages. Logs the summary
/// line (spdlog info) and returns it. Every problem is one Error naming the
/// file and the node. Does not check GPU ids against a fabric: call validate().
ChakraSummary load_chakra_trace(const std::string& prefix, const std::vector<std::string>& paths,
                                const ChakraOptions& options, Dag& dag);

/// What an export wrote.
struct ChakraExport {
  std::vector<std::string> files;  // NAME.i.et, and NAME.comm_groups.json when any collective
  std::uint64_t nodes = 0;
  std::uint64_t collectives = 0;  // coflows written as COMM_COLL_NODEs
  std::uint64_t messages = 0;     // flows written as a send and a receive
};

/// The files an export to `prefix` for `gpus` GPUs writes.
std::vector<std::string> chakra_export_files(const std::string& prefix, GpuId gpus);

/// Writes GPU i's part of `dag` as `prefix`.i.et for every GPU i < `gpus`
/// (each file whole, through a temporary one): tasks as COMP_NODEs, a coflow
/// in which every member sends the same bytes to every other as an all-to-all
/// COMM_COLL_NODE, any other as sends and receives (docs/workloads.md).
/// Importing the files gives `dag` back, coflow for coflow.
ChakraExport write_chakra_trace(const Dag& dag, GpuId gpus, const std::string& prefix);

}  // namespace shoal::work
