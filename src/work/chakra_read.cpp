#include "chakra_read.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "chakra_stream.hpp"
#include "shoal/core/error.hpp"

namespace shoal::work::chakra {

std::string_view node_kind_name(NodeKind kind) {
  switch (kind) {
    case NodeKind::kInvalid:
      return "INVALID_NODE";
    case NodeKind::kMetadata:
      return "METADATA_NODE";
    case NodeKind::kMemLoad:
      return "MEM_LOAD_NODE";
    case NodeKind::kMemStore:
      return "MEM_STORE_NODE";
    case NodeKind::kCompute:
      return "COMP_NODE";
    case NodeKind::kSend:
      return "COMM_SEND_NODE";
    case NodeKind::kRecv:
      return "COMM_RECV_NODE";
    case NodeKind::kCollective:
      return "COMM_COLL_NODE";
    case NodeKind::kStorage:
      return "STORAGE_NODE";
    case NodeKind::kBatch:
      return "BATCH_NODE";
    case NodeKind::kCheckpoint:
      break;
  }
  return "CHECKPOINT_NODE";
}

namespace {

using Attribute = chakra_et::AttributeProto;

/// Reads one node's fields and attributes into a TraceNode.
class NodeReader {
 public:
  NodeReader(const std::string& path, std::uint32_t rank, std::uint32_t npus,
             const ChakraOptions& options, ChakraSummary& summary)
      : path_(path), rank_(rank), npus_(npus), options_(options), summary_(summary) {}

  TraceNode read(const chakra_et::Node& node) {
    id_ = node.id();
    TraceNode out;
    out.id = node.id();
    out.name = node.name();
    const int type = static_cast<int>(node.type());
    if (!chakra_et::NodeType_IsValid(type)) {
      fail("unknown node type " + std::to_string(type) +
           " (Chakra's are 0 INVALID_NODE to 10 CHECKPOINT_NODE)");
    }
    out.kind = static_cast<NodeKind>(type);
    count_fields(node, out.kind);
    const Attributes attrs = attributes(node);
    switch (out.kind) {
      case NodeKind::kCompute:
        read_compute(node, attrs, out);
        break;
      case NodeKind::kSend:
      case NodeKind::kRecv:
        read_message(attrs, out);
        break;
      case NodeKind::kCollective:
        read_collective(attrs, out);
        break;
      default:
        ++summary_.zero_time[std::string(node_kind_name(out.kind))];
        break;
    }
    read_labels(attrs, out);
    for (const auto& [name, attr] : attrs) {
      if (used_.count(name) == 0) ++summary_.not_modelled["attribute " + name];
    }
    used_.clear();
    return out;
  }

 private:
  using Attributes = std::map<std::string, const Attribute*>;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("chakra trace " + path_ + ", node " + std::to_string(id_) + ": " + what);
  }

  /// The node's attributes by name; of a name given twice, the first.
  Attributes attributes(const chakra_et::Node& node) {
    Attributes out;
    for (const Attribute& a : node.attr()) {
      if (!out.emplace(a.name(), &a).second) {
        ++summary_.not_modelled["attribute " + a.name() + " (given twice: the first read)"];
      }
    }
    return out;
  }

  /// The fields no node type's model reads, counted where they hold anything.
  void count_fields(const chakra_et::Node& node, NodeKind kind) {
    auto count = [&](bool present, const char* field) {
      if (present) ++summary_.not_modelled[std::string("field ") + field];
    };
    count(node.start_time_micros() != 0, "start_time_micros");
    count(node.has_inputs(), "inputs");
    count(node.has_outputs(), "outputs");
    // Communication is simulated, not replayed; the other types take no time.
    count(kind != NodeKind::kCompute && node.duration_micros() != 0,
          "duration_micros (of a node that is not COMP_NODE)");
    const auto& unknown = node.GetReflection()->GetUnknownFields(node);
    for (int i = 0; i < unknown.field_count(); ++i) {
      ++summary_.not_modelled["field " + std::to_string(unknown.field(i).number()) +
                              " (not in Shoal's schema)"];
    }
  }

  const Attribute* find(const Attributes& attrs, std::string_view name) {
    const auto it = attrs.find(std::string(name));
    if (it == attrs.end()) return nullptr;
    used_.insert(it->first);
    return it->second;
  }

  std::optional<std::int64_t> integer(const Attributes& attrs, std::string_view name) {
    const Attribute* a = find(attrs, name);
    if (a == nullptr) return std::nullopt;
    const auto v = integer_value(*a);
    if (!v) fail("attribute " + std::string(name) + " is not an integer (or is above 2^63 - 1)");
    return v;
  }

  std::int64_t required(const Attributes& attrs, std::string_view name, std::string_view node) {
    const auto v = integer(attrs, name);
    if (!v) fail("a " + std::string(node) + " without the attribute " + std::string(name));
    return *v;
  }

  std::string text(const Attributes& attrs, std::string_view name) {
    const Attribute* a = find(attrs, name);
    if (a == nullptr) return {};
    if (a->value_case() == Attribute::kStringVal) return a->string_val();
    if (const auto v = integer_value(*a)) return std::to_string(*v);
    fail("attribute " + std::string(name) + " is neither a string nor an integer");
  }

  std::uint32_t npu(std::int64_t value, std::string_view attr) const {
    if (value < 0 || value >= npus_) {
      fail("attribute " + std::string(attr) + " = " + std::to_string(value) +
           " is outside the trace's NPUs 0.." + std::to_string(npus_ - 1) +
           " (a rank file missing?)");
    }
    return static_cast<std::uint32_t>(value);
  }

  void read_compute(const chakra_et::Node& node, const Attributes& attrs, TraceNode& out) {
    ++summary_.compute;
    constexpr auto kMaxMicros = static_cast<std::uint64_t>(kTimeInfinity / kMicrosecond);
    if (node.duration_micros() > kMaxMicros) {
      fail("duration_micros " + std::to_string(node.duration_micros()) +
           " is longer than Shoal's time range");
    }
    out.duration = static_cast<Time>(node.duration_micros()) * kMicrosecond;
    // The exact time Shoal's export keeps beside the whole microseconds; an
    // edited duration_micros wins over it.
    if (const auto ps = integer(attrs, kDurationPs)) {
      if (*ps >= 0 && *ps / kMicrosecond == out.duration / kMicrosecond) {
        out.duration = *ps;
      } else {
        ++summary_.not_modelled["attribute shoal_duration_ps (disagrees with duration_micros)"];
      }
    }
    if (options_.flops_per_second > 0) {
      if (const auto ops = integer(attrs, "num_ops")) {
        if (*ops < 0) fail("attribute num_ops is negative");
        const double ps = std::round(static_cast<double>(*ops) / options_.flops_per_second *
                                     static_cast<double>(kSecond));
        if (!(ps < static_cast<double>(kTimeInfinity))) {
          fail("num_ops " + std::to_string(*ops) + " take longer than Shoal's time range");
        }
        out.duration = static_cast<Time>(ps);
        out.timed_by_ops = true;
        ++summary_.compute_from_ops;
      }
    }
  }

  void read_message(const Attributes& attrs, TraceNode& out) {
    const bool send = out.kind == NodeKind::kSend;
    const std::string_view what = send ? "COMM_SEND_NODE" : "COMM_RECV_NODE";
    const std::string_view peer = send ? "comm_dst" : "comm_src";
    const std::string_view self = send ? "comm_src" : "comm_dst";
    out.peer = npu(required(attrs, peer, what), peer);
    if (out.peer == rank_)
      fail(std::string(what) + " with itself (" + std::string(peer) + " " + std::to_string(rank_) +
           ")");
    // ASTRA-sim refuses a send whose comm_src is not the NPU issuing it.
    if (const auto own = integer(attrs, self); own && *own != rank_) {
      fail(std::string(self) + " = " + std::to_string(*own) + " in the file of NPU " +
           std::to_string(rank_));
    }
    out.bytes = required(attrs, "comm_size", what);
    if (out.bytes < 0) fail("comm_size is negative");
    out.tag = integer(attrs, "comm_tag").value_or(0);
    out.coflow = text(attrs, kCoflow);
    if (const auto start = integer(attrs, kStartPs)) out.start = std::max<Time>(0, *start);
  }

  void read_collective(const Attributes& attrs, TraceNode& out) {
    const std::int64_t type = required(attrs, "comm_type", "COMM_COLL_NODE");
    const auto kind = collective_kind(type);
    if (!kind) {
      fail("comm_type " + std::to_string(type) +
           " is not a Chakra collective (0 ALL_REDUCE to "
           "9 BARRIER)");
    }
    out.collective = *kind;
    const auto size = integer(attrs, "comm_size");
    if (!size && *kind != CollectiveKind::kBarrier) {
      fail("a " + std::string(collective_name(*kind)) + " without the attribute comm_size");
    }
    out.bytes = size.value_or(0);
    if (out.bytes < 0) fail("comm_size is negative");
    out.group = text(attrs, "pg_name");
    if (const std::string algorithm = text(attrs, kAlgorithm); !algorithm.empty()) {
      try {
        out.algorithm = parse_collective_algorithm(algorithm);
      } catch (const Error& e) {
        fail(std::string("attribute shoal_algorithm: ") + e.what());
      }
    }
    if (const auto start = integer(attrs, kStartPs)) out.start = std::max<Time>(0, *start);
  }

  void read_labels(const Attributes& attrs, TraceNode& out) {
    // A node on the CPU would run beside the GPU's work in ASTRA-sim; Shoal
    // runs every node of an NPU on its GPU, which is what false says.
    if (const Attribute* cpu = find(attrs, "is_cpu_op"); cpu != nullptr) {
      const bool on_gpu = cpu->value_case() == Attribute::kBoolVal
                              ? !cpu->bool_val()
                              : integer_value(*cpu).value_or(1) == 0;  // some writers use 0/1
      if (!on_gpu) ++summary_.not_modelled["attribute is_cpu_op (true)"];
    }
    auto index = [&](std::string_view name) -> std::optional<std::uint64_t> {
      const auto v = integer(attrs, name);
      if (v && *v < 0) fail("attribute " + std::string(name) + " is negative");
      return v ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*v)) : std::nullopt;
    };
    out.index = index(kIndex);
    if (out.kind == NodeKind::kSend) out.flow = index(kFlow);
    out.labels.type = text(attrs, kType);
    for (std::size_t i = 0; i < kLabelNames.size(); ++i) {
      const auto v = integer(attrs, kLabelNames[i]);
      if (v && (*v < 0 || *v > std::numeric_limits<std::uint32_t>::max())) {
        fail("attribute " + std::string(kLabelNames[i]) + " is outside 0..4294967295");
      }
      if (v) out.labels.numbers[i] = static_cast<std::uint32_t>(*v);
    }
  }

  const std::string& path_;
  std::uint32_t rank_;
  std::uint32_t npus_;
  const ChakraOptions& options_;
  ChakraSummary& summary_;
  std::uint64_t id_ = 0;
  std::set<std::string> used_;
};

/// Fails, naming a node on it, when the file's dependencies have a cycle.
void check_acyclic(const RankTrace& trace) {
  const std::size_t n = trace.nodes.size();
  std::vector<std::uint32_t> waiting(n, 0);
  std::vector<std::vector<std::uint32_t>> children(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    waiting[i] = static_cast<std::uint32_t>(trace.nodes[i].deps.size());
    for (const std::uint32_t d : trace.nodes[i].deps) children[d].push_back(i);
  }
  std::vector<std::uint32_t> ready;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::uint32_t i = ready.back();
    ready.pop_back();
    ++done;
    for (const std::uint32_t c : children[i]) {
      if (--waiting[c] == 0) ready.push_back(c);
    }
  }
  if (done == n) return;
  // Walk back through unfinished dependencies until a node repeats: a cycle.
  std::uint32_t at = 0;
  while (waiting[at] == 0) ++at;
  std::vector<std::uint32_t> seen_at(n, std::numeric_limits<std::uint32_t>::max());
  std::vector<std::uint32_t> walk;
  while (seen_at[at] == std::numeric_limits<std::uint32_t>::max()) {
    seen_at[at] = static_cast<std::uint32_t>(walk.size());
    walk.push_back(at);
    for (const std::uint32_t d : trace.nodes[at].deps) {
      if (waiting[d] != 0) {
        at = d;
        break;
      }
    }
  }
  std::string cycle;
  for (std::size_t k = seen_at[at]; k < walk.size(); ++k) {
    cycle += std::to_string(trace.nodes[walk[k]].id) + " -> ";
  }
  cycle += std::to_string(trace.nodes[at].id);
  throw Error("chakra trace " + trace.path + ", node " + std::to_string(trace.nodes[at].id) +
              ": a dependency cycle: " + cycle + " (each depends on the next)");
}

}  // namespace

RankTrace read_rank_trace(const std::string& path, std::uint32_t rank, std::uint32_t npus,
                          const ChakraOptions& options, ChakraSummary& summary) {
  RankTrace trace;
  trace.path = path;
  TraceReader reader(path);
  const chakra_et::GlobalMetadata metadata = reader.read_metadata();
  if (metadata.version() != kChakraVersion &&
      std::find(summary.unknown_versions.begin(), summary.unknown_versions.end(),
                metadata.version()) == summary.unknown_versions.end()) {
    summary.unknown_versions.push_back(metadata.version());
    spdlog::warn(
        "chakra trace {}: version \"{}\", read as {} (the version Shoal was checked "
        "against)",
        path, metadata.version(), kChakraVersion);
  }
  for (const chakra_et::AttributeProto& a : metadata.attr()) {
    ++summary.not_modelled["metadata attribute " + a.name()];
  }
  NodeReader node_reader(path, rank, npus, options, summary);
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  std::vector<std::vector<std::uint64_t>> dep_ids;
  chakra_et::Node node;
  while (reader.next(node)) {
    if (trace.nodes.size() >= std::numeric_limits<std::uint32_t>::max()) {
      throw Error("chakra trace " + path + ": more than 4294967295 nodes");
    }
    const auto at = static_cast<std::uint32_t>(trace.nodes.size());
    if (!index.emplace(node.id(), at).second) {
      throw Error("chakra trace " + path + ", node " + std::to_string(node.id()) +
                  ": the id is used twice");
    }
    trace.nodes.push_back(node_reader.read(node));
    std::vector<std::uint64_t>& deps = dep_ids.emplace_back();
    deps.assign(node.ctrl_deps().begin(), node.ctrl_deps().end());
    deps.insert(deps.end(), node.data_deps().begin(), node.data_deps().end());
    ++summary.nodes;
  }
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    TraceNode& n = trace.nodes[i];
    for (const std::uint64_t id : dep_ids[i]) {
      const auto it = index.find(id);
      if (it == index.end()) {
        throw Error("chakra trace " + path + ", node " + std::to_string(n.id) +
                    ": depends on node " + std::to_string(id) + ", which the file does not have");
      }
      if (it->second == i) {
        throw Error("chakra trace " + path + ", node " + std::to_string(n.id) +
                    ": depends on itself");
      }
      if (std::find(n.deps.begin(), n.deps.end(), it->second) == n.deps.end()) {
        n.deps.push_back(it->second);
      }
    }
  }
  check_acyclic(trace);
  return trace;
}

}  // namespace shoal::work::chakra
