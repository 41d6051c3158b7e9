#include "shoal/work/dag.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "shoal/core/error.hpp"

namespace shoal::work {

CoflowType parse_coflow_type(std::string_view text) {
  if (text == "EP" || text == "ep") return CoflowType::kEp;
  if (text == "PP" || text == "pp") return CoflowType::kPp;
  if (text == "DP" || text == "dp") return CoflowType::kDp;
  if (text == "TP" || text == "tp") return CoflowType::kTp;
  if (text == "OTHER" || text == "other") return CoflowType::kOther;
  if (text == "CP" || text == "cp") return CoflowType::kCp;
  throw Error("unknown coflow type \"" + std::string(text) +
              "\" (use EP, PP, DP, TP, CP or OTHER)");
}

std::string_view coflow_type_name(CoflowType type) {
  switch (type) {
    case CoflowType::kEp:
      return "EP";
    case CoflowType::kPp:
      return "PP";
    case CoflowType::kDp:
      return "DP";
    case CoflowType::kTp:
      return "TP";
    case CoflowType::kCp:
      return "CP";
    case CoflowType::kOther:
      break;
  }
  return "OTHER";
}

void Dag::add_name(const std::string& name, NodeRef node) {
  if (name.empty()) throw Error("a task or coflow needs a non-empty name");
  if (!names_.insert(name, node, name_of())) {
    throw Error("name \"" + name + "\" is used twice (task and coflow names must be unique)");
  }
  resolved_ = false;
}

namespace {
void check_gpu_id(const std::string& node, GpuId gpu) {
  if (gpu > kMaxGpuId) {
    throw Error(node + ": GPU " + std::to_string(gpu) + " is beyond the largest GPU id " +
                std::to_string(kMaxGpuId));
  }
}
}  // namespace

NodeRef Dag::add_task(std::string name, GpuId gpu, Time duration, std::vector<std::string> after,
                      const TaskLabels& labels) {
  check_gpu_id("task \"" + name + "\"", gpu);
  make_room(tasks_, 1);
  const NodeRef node{NodeRef::Kind::kTask, static_cast<std::uint32_t>(tasks_.size())};
  add_name(name, node);
  tasks_.push_back({store_name(name), gpu, duration, {}, labels});
  if (!resolve_now(after, tasks_.back().after)) {
    task_after_names_.emplace_back(node.index, std::move(after));
  }
  grew();
  return node;
}

NodeRef Dag::add_coflow(std::string name, const CoflowLabels& labels, Time earliest_start,
                        std::span<const Flow> flows, std::vector<std::string> after) {
  if (!whole_) throw Error("internal: a coflow added after keep_flows");
  Bytes bytes = 0;
  for (const Flow& f : flows) {
    check_gpu_id("coflow \"" + name + "\"", std::max(f.src, f.dst));
    bytes += f.bytes;
    flow_gpus_used_ = std::max({flow_gpus_used_, f.src + 1, f.dst + 1});
  }
  make_room(coflows_, 1);
  make_room(flows_, flows.size());
  const NodeRef node{NodeRef::Kind::kCoflow, static_cast<std::uint32_t>(coflows_.size())};
  add_name(name, node);
  Coflow c;
  c.name = store_name(name);
  c.labels = labels;
  c.earliest_start = earliest_start;
  c.first_flow = static_cast<std::uint32_t>(flows_.size());
  c.flow_count = static_cast<std::uint32_t>(flows.size());
  c.bytes = bytes;
  total_bytes_ += bytes;
  flows_.append(flows);
  flow_count_ = flows_.size();
  dst_ = flows_.empty() ? nullptr : reinterpret_cast<const std::byte*>(&flows_.data()->dst);
  if (!resolve_now(after, c.after)) coflow_after_names_.emplace_back(node.index, std::move(after));
  coflows_.push_back(c);
  grew();
  return node;
}

std::optional<NodeRef> Dag::find(std::string_view name) const {
  return names_.find(name, name_of());
}

std::string_view Dag::name(NodeRef node) const {
  return node.kind == NodeRef::Kind::kTask ? tasks_[node.index].name : coflows_[node.index].name;
}

std::string Dag::describe(NodeRef node) const {
  return std::string(node.kind == NodeRef::Kind::kTask ? "task" : "coflow") + " \"" +
         std::string(name(node)) + "\"";
}

const std::string* Dag::collect_refs(const std::vector<std::string>& names) {
  resolving_.clear();
  for (const std::string& n : names) {
    const auto ref = find(n);
    if (!ref) return &n;
    if (std::find(resolving_.begin(), resolving_.end(), *ref) == resolving_.end()) {
      resolving_.push_back(*ref);
    }
  }
  return nullptr;
}

bool Dag::resolve_now(const std::vector<std::string>& names, std::span<const NodeRef>& after) {
  if (collect_refs(names) != nullptr) return false;
  after = store_after(resolving_);
  return true;
}

void Dag::resolve() {
  auto resolve_list = [&](NodeRef node, const std::vector<std::string>& names) {
    if (const std::string* missing = collect_refs(names)) {
      throw Error(describe(node) + ": 'after' names \"" + *missing + "\", which does not exist");
    }
    return store_after(resolving_);
  };
  // Only the nodes that named a node not yet added still hold their names.
  for (const auto& [task, names] : task_after_names_) {
    tasks_[task].after = resolve_list({NodeRef::Kind::kTask, task}, names);
  }
  for (const auto& [coflow, names] : coflow_after_names_) {
    coflows_[coflow].after = resolve_list({NodeRef::Kind::kCoflow, coflow}, names);
  }
  std::vector<PendingAfter>().swap(task_after_names_);
  std::vector<PendingAfter>().swap(coflow_after_names_);
  resolved_ = true;
}

CoflowId Dag::coflow_of(FlowId flow) const {
  const auto it = std::upper_bound(coflows_.begin(), coflows_.end(), flow,
                                   [](FlowId f, const Coflow& c) { return f < c.first_flow; });
  return CoflowId{static_cast<std::uint32_t>(it - coflows_.begin() - 1)};
}

GpuId Dag::gpus_used() const {
  GpuId used = flow_gpus_used_;
  for (const auto& t : tasks_) used = std::max(used, t.gpu + 1);
  return used;
}

Bytes Dag::total_bytes() const { return total_bytes_; }

std::span<const Flow> Dag::all_flows() const {
  if (!whole_) throw Error("internal: every flow asked of a DAG that kept only some");
  return flows_;
}

std::uint64_t Dag::fragment_bytes(std::size_t held) const {
  const std::uint64_t dst = flow_gpus_used_ <= std::uint32_t{UINT16_MAX} + 1 ? 2 : 4;
  const std::uint64_t words = flow_count_ / 64 + 1;
  return held * sizeof(Flow) + (flow_count_ + 1) * dst + words * (sizeof(std::uint64_t) + 4);
}

void Dag::keep_flows(const std::function<bool(const Flow&)>& keep) {
  if (!whole_) throw Error("internal: keep_flows twice");
  const bool narrow = flow_gpus_used_ <= std::uint32_t{UINT16_MAX} + 1;
  const std::size_t width = narrow ? 2 : 4;
  flow_dst_.assign((flow_count_ + 1) * width, std::byte{0});  // a spare: each read takes 4 bytes
  for (std::size_t f = 0; f < flow_count_; ++f) {
    const std::uint32_t dst = flows_[f].dst;
    std::memcpy(flow_dst_.data() + f * width, &dst, width);  // its low bytes
  }
  dst_ = flow_dst_.data();
  dst_shift_ = narrow ? 1 : 2;
  dst_mask_ = narrow ? UINT16_MAX : UINT32_MAX;
  const std::size_t words = flow_count_ / 64 + 1;
  held_bits_.assign(words, 0);
  held_before_.assign(words, 0);
  // The held flows move to the front, in order (each only ever forwards), and
  // the rest of the block goes back without a copy.
  std::size_t held = 0;
  for (std::size_t f = 0; f < flow_count_; ++f) {
    if (!keep(flows_[f])) continue;
    held_bits_[f / 64] |= std::uint64_t{1} << (f % 64);
    flows_[held++] = flows_[f];
  }
  if (held > UINT32_MAX) throw Error("internal: more than 2^32 flows held");
  flows_.truncate(held);
  flows_.shrink_to_fit();
  std::uint32_t count = 0;
  for (std::size_t w = 0; w < words; ++w) {
    held_before_[w] = count;
    count += static_cast<std::uint32_t>(std::popcount(held_bits_[w]));
  }
  whole_ = false;
}

void Dag::validate(GpuId gpu_count) const {
  if (!whole_) throw Error("internal: Dag::validate after keep_flows");
  if (!resolved_) throw Error("internal: Dag::validate before resolve");
  auto gpu_error = [&](NodeRef node, const std::string& what, GpuId gpu) {
    const std::string fabric =
        gpu_count == 0 ? "the fabric has no GPUs" : "GPUs 0.." + std::to_string(gpu_count - 1);
    return Error(describe(node) + ": " + what + " GPU " + std::to_string(gpu) +
                 " is outside the fabric (" + fabric + ")");
  };
  // Which GPUs take part in each coflow, for the locality rules.
  auto touches = [&](const Coflow& c, GpuId gpu) {
    for (const Flow& f : flows_of(c)) {
      if (f.src == gpu || f.dst == gpu) return true;
    }
    return false;
  };
  for (std::uint32_t i = 0; i < tasks_.size(); ++i) {
    const ComputeTask& t = tasks_[i];
    const NodeRef node{NodeRef::Kind::kTask, i};
    if (t.gpu >= gpu_count) throw gpu_error(node, "its", t.gpu);
    if (t.duration < 0) throw Error(describe(node) + ": negative duration");
    for (const NodeRef dep : t.after) {
      if (dep == node) throw Error(describe(node) + " depends on itself");
      if (dep.kind == NodeRef::Kind::kTask && tasks_[dep.index].gpu != t.gpu) {
        throw Error(describe(node) + " on GPU " + std::to_string(t.gpu) + " depends on " +
                    describe(dep) + " on GPU " + std::to_string(tasks_[dep.index].gpu) +
                    "; a dependency between GPUs needs a coflow");
      }
      if (dep.kind == NodeRef::Kind::kCoflow && !touches(coflows_[dep.index], t.gpu)) {
        throw Error(describe(node) + " on GPU " + std::to_string(t.gpu) + " depends on " +
                    describe(dep) + ", which has no flow to or from GPU " + std::to_string(t.gpu));
      }
    }
  }
  for (std::uint32_t i = 0; i < coflows_.size(); ++i) {
    const Coflow& c = coflows_[i];
    const NodeRef node{NodeRef::Kind::kCoflow, i};
    if (c.flow_count == 0) throw Error(describe(node) + " has no flows");
    if (c.earliest_start < 0) throw Error(describe(node) + ": negative start time");
    for (const Flow& f : flows_of(c)) {
      const std::string which = "flow " + std::to_string(f.src) + "->" + std::to_string(f.dst);
      if (f.src >= gpu_count) throw gpu_error(node, which + ": source", f.src);
      if (f.dst >= gpu_count) throw gpu_error(node, which + ": destination", f.dst);
      if (f.src == f.dst) throw Error(describe(node) + ": " + which + " is a flow to itself");
      if (f.bytes <= 0) throw Error(describe(node) + ": " + which + " has no bytes");
    }
    for (const NodeRef dep : c.after) {
      if (dep == node) throw Error(describe(node) + " depends on itself");
      bool concerns_a_sender = false;
      for (const Flow& f : flows_of(c)) {
        concerns_a_sender = dep.kind == NodeRef::Kind::kTask ? tasks_[dep.index].gpu == f.src
                                                             : touches(coflows_[dep.index], f.src);
        if (concerns_a_sender) break;
      }
      if (!concerns_a_sender) {
        throw Error(describe(node) + " depends on " + describe(dep) +
                    ", which involves none of its sending GPUs");
      }
    }
  }
  // Cycles: Kahn's algorithm over all nodes; whatever is left lies on or behind
  // one. The dependents are one flat array by node, counted and then filled (a
  // vector per node made this check the peak of reading a large config), in
  // 32-bit indices: a DAG of 2^32 nodes or dependencies would not fit in memory.
  const std::size_t n = tasks_.size() + coflows_.size();
  auto id = [&](NodeRef r) {
    return static_cast<std::uint32_t>(r.kind == NodeRef::Kind::kTask ? r.index
                                                                     : tasks_.size() + r.index);
  };
  auto for_each_edge = [&](auto&& edge) {  // edge(dependency, dependent), in node order
    for (std::uint32_t i = 0; i < tasks_.size(); ++i) {
      for (const NodeRef dep : tasks_[i].after) edge(id(dep), id({NodeRef::Kind::kTask, i}));
    }
    for (std::uint32_t i = 0; i < coflows_.size(); ++i) {
      for (const NodeRef dep : coflows_[i].after) edge(id(dep), id({NodeRef::Kind::kCoflow, i}));
    }
  };
  std::vector<std::uint32_t> waiting(n, 0);
  // Node v's dependents end up at [start[v], start[v + 1]): counted at v + 2,
  // summed, then each placed at start[v + 1]++, which leaves it at its end.
  std::vector<std::uint32_t> start(n + 2, 0);
  std::uint64_t edges = 0;
  for_each_edge([&](std::uint32_t from, std::uint32_t to) {
    ++start[from + 2];
    ++waiting[to];
    ++edges;
  });
  if (edges > UINT32_MAX) throw Error("the DAG has more than 2^32 dependencies");
  for (std::size_t v = 2; v < n + 2; ++v) start[v] += start[v - 1];
  std::vector<std::uint32_t> dependents(edges);
  for_each_edge([&](std::uint32_t from, std::uint32_t to) { dependents[start[from + 1]++] = to; });
  std::vector<std::uint32_t> ready;
  for (std::uint32_t v = 0; v < n; ++v) {
    if (waiting[v] == 0) ready.push_back(v);
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::uint32_t v = ready.back();
    ready.pop_back();
    ++done;
    for (std::uint32_t k = start[v]; k < start[v + 1]; ++k) {
      if (--waiting[dependents[k]] == 0) ready.push_back(dependents[k]);
    }
  }
  if (done == n) return;
  // Walk back along unfinished dependencies from any stuck node until a node
  // repeats: that node lies on a cycle; name the cycle in order.
  auto node_of = [&](std::size_t v) {
    return v < tasks_.size()
               ? NodeRef{NodeRef::Kind::kTask, static_cast<std::uint32_t>(v)}
               : NodeRef{NodeRef::Kind::kCoflow, static_cast<std::uint32_t>(v - tasks_.size())};
  };
  auto deps_of = [&](std::size_t v) -> std::span<const NodeRef> {
    const NodeRef r = node_of(v);
    return r.kind == NodeRef::Kind::kTask ? tasks_[r.index].after : coflows_[r.index].after;
  };
  std::size_t v = 0;
  while (waiting[v] == 0) ++v;
  std::vector<std::size_t> seen_at(n, n);
  std::vector<std::size_t> path;
  while (seen_at[v] == n) {
    seen_at[v] = path.size();
    path.push_back(v);
    for (const NodeRef dep : deps_of(v)) {
      if (waiting[id(dep)] != 0) {
        v = id(dep);
        break;
      }
    }
  }
  std::string cycle;
  for (std::size_t k = seen_at[v]; k < path.size(); ++k)
    cycle += describe(node_of(path[k])) + " -> ";
  cycle += describe(node_of(v));
  throw Error("the DAG has a cycle: " + cycle + " (each waits for the next)");
}

}  // namespace shoal::work
