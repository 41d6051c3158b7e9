// A Dag out as a Chakra trace, one file per GPU, that the import reads back
// into the same Dag: names, exact durations, labels and start times travel as
// Shoal's own attributes ("shoal_duration_ps", "shoal_coflow", ...), which
// other readers ignore. Every file lists its nodes in one topological order of
// the whole Dag, so the k-th collective of a group is the same one in every
// file, as Chakra's readers match them.
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <span>
#include <unordered_map>

#include "chakra_read.hpp"
#include "chakra_stream.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/files.hpp"
#include "shoal/work/chakra_trace.hpp"

namespace shoal::work {

namespace {

using chakra_et::AttributeProto;
using chakra_et::Node;

/// The Dag's nodes in dependency order (each after everything it waits for),
/// ties by kind (tasks first) and index.
std::vector<NodeRef> topological_order(const Dag& dag) {
  const std::size_t tasks = dag.tasks().size();
  const std::size_t total = tasks + dag.coflows().size();
  auto flat = [&](NodeRef r) { return r.kind == NodeRef::Kind::kTask ? r.index : tasks + r.index; };
  auto ref = [&](std::size_t i) {
    return i < tasks ? NodeRef{NodeRef::Kind::kTask, static_cast<std::uint32_t>(i)}
                     : NodeRef{NodeRef::Kind::kCoflow, static_cast<std::uint32_t>(i - tasks)};
  };
  std::vector<std::uint32_t> waiting(total, 0);
  std::vector<std::vector<std::uint32_t>> children(total);
  auto edges = [&](std::size_t i, std::span<const NodeRef> after) {
    waiting[i] = static_cast<std::uint32_t>(after.size());
    for (const NodeRef d : after) children[flat(d)].push_back(static_cast<std::uint32_t>(i));
  };
  for (std::size_t t = 0; t < tasks; ++t) edges(t, dag.tasks()[t].after);
  for (std::size_t c = 0; c < dag.coflows().size(); ++c) edges(tasks + c, dag.coflows()[c].after);
  std::set<std::uint32_t> ready;
  for (std::uint32_t i = 0; i < total; ++i) {
    if (waiting[i] == 0) ready.insert(i);
  }
  std::vector<NodeRef> order;
  order.reserve(total);
  while (!ready.empty()) {
    const std::uint32_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(ref(i));
    for (const std::uint32_t c : children[i]) {
      if (--waiting[c] == 0) ready.insert(c);
    }
  }
  if (order.size() != total) throw Error("internal: the Dag to export has a cycle");
  return order;
}

/// A coflow in which each of n >= 2 GPUs sends the same bytes to each other
/// once is an all-to-all of n x those bytes (comm_size, each NPU's buffer).
std::optional<Bytes> all_to_all_bytes(std::span<const Flow> flows, std::set<GpuId>& members) {
  members.clear();
  for (const Flow& f : flows) {
    members.insert(f.src);
    members.insert(f.dst);
  }
  const std::size_t n = members.size();
  if (n < 2 || flows.size() != n * (n - 1)) return std::nullopt;
  // In the order a direct all-to-all is read back in (by sender, then
  // receiver), each pair once: the flows keep their ids through the trace.
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    if (f.bytes != flows.front().bytes || f.src == f.dst) return std::nullopt;
    if (i > 0 && std::pair(flows[i - 1].src, flows[i - 1].dst) >= std::pair(f.src, f.dst)) {
      return std::nullopt;
    }
  }
  Bytes total = 0;
  if (__builtin_mul_overflow(flows.front().bytes, static_cast<Bytes>(n), &total)) {
    return std::nullopt;
  }
  return total;
}

void add_integer(Node& node, std::string_view name, std::int64_t value) {
  AttributeProto* a = node.add_attr();
  a->set_name(std::string(name));
  a->set_int64_val(value);
}
void add_string(Node& node, std::string_view name, std::string_view value) {
  AttributeProto* a = node.add_attr();
  a->set_name(std::string(name));
  a->set_string_val(std::string(value));
}

std::string_view task_kind_label(TaskKind kind) {
  switch (kind) {
    case TaskKind::kForward:
      return "forward";
    case TaskKind::kBackward:
      return "backward";
    case TaskKind::kOptimizer:
      return "optimizer";
    case TaskKind::kOther:
      break;
  }
  return "";
}

/// Labels that are not the default, so a plain trace stays plain.
void add_labels(Node& node, std::string_view type, const std::array<std::uint32_t, 5>& numbers) {
  if (!type.empty()) add_string(node, chakra::kType, std::string(type));
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    if (numbers[i] != 0) add_integer(node, chakra::kLabelNames[i], numbers[i]);
  }
}

class Exporter {
 public:
  Exporter(const Dag& dag, GpuId gpus) : dag_(dag), gpus_(gpus) {}

  ChakraExport write(const std::string& prefix) {
    order_ = topological_order(dag_);
    find_collectives();
    ChakraExport out;
    for (GpuId g = 0; g < gpus_; ++g) {
      const std::vector<Node> nodes = nodes_of(g, out);
      const std::string path = prefix + "." + std::to_string(g) + ".et";
      core::write_file(path, "-o", [&](std::ostream& file) {
        chakra_et::GlobalMetadata metadata;
        metadata.set_version(std::string(chakra::kChakraVersion));
        chakra::write_delimited(file, metadata);
        for (const Node& n : nodes) chakra::write_delimited(file, n);
      });
      out.files.push_back(path);
      out.nodes += nodes.size();
    }
    // ASTRA-sim's communicator groups: pg_name -> its NPUs.
    nlohmann::json groups = nlohmann::json::object();
    for (const auto& [members, name] : groups_) groups[name] = members;
    const std::string path = prefix + ".comm_groups.json";
    core::write_file(path, "-o", [&](std::ostream& file) { file << groups.dump(1) << '\n'; });
    out.files.push_back(path);
    return out;
  }

 private:
  struct Collective {
    Bytes bytes = 0;
    std::string group;  // pg_name; "" for all the trace's NPUs
  };

  void find_collectives() {
    std::set<GpuId> members;
    for (std::uint32_t c = 0; c < dag_.coflows().size(); ++c) {
      const auto bytes = all_to_all_bytes(dag_.flows_of(dag_.coflows()[c]), members);
      if (!bytes) continue;
      std::string group;
      if (members.size() != gpus_) {
        const std::vector<GpuId> list(members.begin(), members.end());
        const auto [it, fresh] = groups_.emplace(list, std::to_string(groups_.size() + 1));
        group = it->second;
      }
      collectives_.emplace(c, Collective{*bytes, group});
    }
  }

  /// GPU g's node ids of a Dag node (empty when it does not concern g).
  const std::vector<std::uint64_t>& ids(NodeRef ref) const {
    static const std::vector<std::uint64_t> none;
    const auto it = ids_.find(key(ref));
    return it == ids_.end() ? none : it->second;
  }
  static std::uint64_t key(NodeRef r) {
    return (std::uint64_t{r.kind == NodeRef::Kind::kCoflow} << 32) | r.index;
  }
  void add_deps(Node& node, std::span<const NodeRef> after) const {
    for (const NodeRef d : after) {
      for (const std::uint64_t id : ids(d)) node.add_data_deps(id);
    }
  }

  std::vector<Node> nodes_of(GpuId g, ChakraExport& out) {
    ids_.clear();
    std::vector<Node> nodes;
    auto next = [&](std::string_view name, chakra_et::NodeType type, NodeRef ref) -> Node& {
      Node& n = nodes.emplace_back();
      n.set_id(nodes.size() - 1);
      n.set_name(std::string(name));
      n.set_type(type);
      ids_[key(ref)].push_back(n.id());
      AttributeProto* cpu = n.add_attr();  // ASTRA-sim asks every node
      cpu->set_name("is_cpu_op");
      cpu->set_bool_val(false);
      return n;
    };
    for (const NodeRef ref : order_) {
      if (ref.kind == NodeRef::Kind::kTask) {
        const ComputeTask& t = dag_.tasks()[ref.index];
        if (t.gpu != g) continue;
        Node& n = next(t.name, chakra_et::COMP_NODE, ref);
        n.set_duration_micros(static_cast<std::uint64_t>(t.duration / kMicrosecond));
        add_integer(n, chakra::kDurationPs, t.duration);
        add_integer(n, chakra::kIndex, ref.index);
        add_labels(n, task_kind_label(t.labels.kind),
                   {t.labels.job, t.labels.iteration, t.labels.micro_batch, t.labels.layer, 0});
        add_deps(n, t.after);
        continue;
      }
      const Coflow& c = dag_.coflows()[ref.index];
      const std::span<const Flow> flows = dag_.flows_of(c);
      const bool involved = std::any_of(flows.begin(), flows.end(),
                                        [&](const Flow& f) { return f.src == g || f.dst == g; });
      if (!involved) continue;
      const CoflowLabels& l = c.labels;
      const std::array<std::uint32_t, 5> numbers{l.job, l.iteration, l.micro_batch, l.layer,
                                                 l.stage};
      auto describe = [&](Node& n) {
        if (c.earliest_start > 0) add_integer(n, chakra::kStartPs, c.earliest_start);
        add_labels(n, l.type == CoflowType::kOther ? "" : coflow_type_name(l.type), numbers);
      };
      if (const auto it = collectives_.find(ref.index); it != collectives_.end()) {
        Node& n = next(c.name, chakra_et::COMM_COLL_NODE, ref);
        add_integer(n, "comm_type", chakra_et::ALL_TO_ALL);
        add_integer(n, "comm_size", it->second.bytes);
        if (!it->second.group.empty()) add_string(n, "pg_name", it->second.group);
        // The coflow is the exchange at once: read back as direct, whatever
        // [workload] collective says.
        add_string(n, chakra::kAlgorithm, "direct");
        add_integer(n, chakra::kIndex, ref.index);
        describe(n);
        add_deps(n, c.after);
        if (g == flows.front().src) ++out.collectives;
        continue;
      }
      for (std::uint32_t k = 0; k < flows.size(); ++k) {
        const Flow& f = flows[k];
        if (f.src != g) continue;
        Node& n = next(c.name, chakra_et::COMM_SEND_NODE, ref);
        add_integer(n, chakra::kIndex, ref.index);
        add_integer(n, chakra::kFlow, k);
        add_integer(n, "comm_src", f.src);
        add_integer(n, "comm_dst", f.dst);
        add_integer(n, "comm_size", f.bytes);
        add_integer(n, "comm_tag", ref.index);
        add_string(n, chakra::kCoflow, c.name);
        describe(n);
        // Only a sender waits in Shoal: the coflow's dependencies gate its
        // flows from g, and a receive waits for nothing but the bytes.
        add_deps(n, c.after);
        ++out.messages;
      }
      for (const Flow& f : flows) {
        if (f.dst != g) continue;
        Node& n = next(c.name, chakra_et::COMM_RECV_NODE, ref);
        add_integer(n, "comm_src", f.src);
        add_integer(n, "comm_dst", f.dst);
        add_integer(n, "comm_size", f.bytes);
        add_integer(n, "comm_tag", ref.index);
        add_string(n, chakra::kCoflow, c.name);
      }
    }
    return nodes;
  }

  const Dag& dag_;
  GpuId gpus_;
  std::vector<NodeRef> order_;
  std::map<std::uint32_t, Collective> collectives_;                    // by coflow index
  std::map<std::vector<GpuId>, std::string> groups_;                   // members -> pg_name
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> ids_;  // this GPU's, by Dag node
};

}  // namespace

std::vector<std::string> chakra_export_files(const std::string& prefix, GpuId gpus) {
  std::vector<std::string> files;
  for (GpuId g = 0; g < gpus; ++g) files.push_back(prefix + "." + std::to_string(g) + ".et");
  files.push_back(prefix + ".comm_groups.json");
  return files;
}

ChakraExport write_chakra_trace(const Dag& dag, GpuId gpus, const std::string& prefix) {
  if (gpus == 0) throw Error("chakra export: no GPU to write");
  for (const Flow& f : dag.all_flows()) {
    if (f.src >= gpus || f.dst >= gpus) {
      throw Error("chakra export: a flow " + std::to_string(f.src) + "->" + std::to_string(f.dst) +
                  " outside GPUs 0.." + std::to_string(gpus - 1));
    }
  }
  for (const ComputeTask& t : dag.tasks()) {
    if (t.gpu >= gpus)
      throw Error("chakra export: task " + std::string(t.name) + " outside the GPUs");
  }
  return Exporter(dag, gpus).write(prefix);
}

}  // namespace shoal::work
