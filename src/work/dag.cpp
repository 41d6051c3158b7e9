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
  if (names_dropped_) throw Error("internal: a node added to a DAG whose names were dropped");
  if (name.empty()) throw Error("a task or coflow needs a non-empty name");
  if (name.front() == '\0')
    throw Error("a task or coflow name must not start with a NUL character");
  if (!names_.insert(name, node, name_of())) {
    throw Error("name \"" + name + "\" is used twice (task and coflow names must be unique)");
  }
  resolved_ = false;
}

namespace {
// `kind` and `name` make the message only when it is thrown: this runs for
// every flow.
void check_gpu_id(std::string_view kind, std::string_view name, GpuId gpu) {
  if (gpu > kMaxGpuId) {
    throw Error(std::string(kind) + " \"" + std::string(name) + "\": GPU " + std::to_string(gpu) +
                " is beyond the largest GPU id " + std::to_string(kMaxGpuId));
  }
}
}  // namespace

NodeRef Dag::add_task(std::string name, GpuId gpu, Time duration, std::vector<std::string> after,
                      const TaskLabels& labels) {
  check_gpu_id("task", name, gpu);
  const NodeRef node{NodeRef::Kind::kTask, static_cast<std::uint32_t>(task_count())};
  if (task_count() >= UINT32_MAX) throw Error("internal: more than 2^32 tasks");
  add_name(name, node);
  task_iterations_ = std::max(task_iterations_, labels.iteration + 1);
  if (labels.kind != TaskKind::kOther) training_jobs_ = std::max(training_jobs_, labels.job + 1);
  task_gpus_used_ = std::max(task_gpus_used_, gpu + 1);
  // A task on another rank's GPU keeps its name and GPU (and, for the check
  // for cycles, its dependencies); one the check refuses is held everywhere.
  const bool held = owns(gpu) || gpu >= fragment_gpus_;
  if (held) {
    make_room(tasks_, 1);
    tasks_.push_back({store_name(name), gpu, duration, {}, labels});
    if (!whole_) held_task_ids_.push_back(node.index);
  } else {
    if (foreign_names_.size() + name.size() > UINT32_MAX) {
      throw Error("workload: the tasks of other ranks' GPUs have more than 4 GiB of names");
    }
    make_room(foreign_gpus_, 1);
    make_room(foreign_names_, name.size());
    foreign_names_.append(std::span<const char>(name.data(), name.size()));
    foreign_gpus_.push_back(gpu);
    set_end(foreign_name_ends_, foreign_gpus_.size() - 1,
            static_cast<std::uint32_t>(foreign_names_.size()));
  }
  if (!whole_) held_tasks_.add(held);
  // Once the task is in place: a name may resolve to it (and fail the check).
  const bool resolved = collect_refs(after) == nullptr;
  if (held) {
    if (resolved) tasks_.back().after = store_after(resolving_);
  } else {
    if (resolved) {
      if (foreign_refs_.size() + resolving_.size() > UINT32_MAX) {
        throw Error("workload: the tasks of other ranks' GPUs have more than 2^32 dependencies");
      }
      make_room(foreign_refs_, resolving_.size());
      foreign_refs_.append(resolving_);
    }
    set_end(foreign_after_ends_, foreign_gpus_.size() - 1,
            static_cast<std::uint32_t>(foreign_refs_.size()));
  }
  if (!resolved) task_after_names_.emplace_back(node.index, std::move(after));
  grew();
  return node;
}

NodeRef Dag::add_unnamed_task(GpuId gpu, const TaskLabels& labels) {
  if (whole_ || holds_tasks_of(gpu)) throw Error("internal: an unnamed task of a GPU it holds");
  const NodeRef node{NodeRef::Kind::kTask, static_cast<std::uint32_t>(task_count())};
  if (task_count() >= UINT32_MAX) throw Error("internal: more than 2^32 tasks");
  if (names_dropped_) throw Error("internal: a node added to a DAG whose names were dropped");
  resolved_ = false;
  task_iterations_ = std::max(task_iterations_, labels.iteration + 1);
  if (labels.kind != TaskKind::kOther) training_jobs_ = std::max(training_jobs_, labels.job + 1);
  task_gpus_used_ = std::max(task_gpus_used_, gpu + 1);
  make_room(foreign_gpus_, 1);
  foreign_gpus_.push_back(gpu);
  // An empty name and no dependencies: its ends are the last ones, not stored.
  held_tasks_.add(false);
  ++unnamed_nodes_;
  grew();
  return node;
}

std::string Dag::reference(NodeRef node) {
  std::string text(1 + 1 + sizeof node.index, '\0');
  text[1] = node.kind == NodeRef::Kind::kTask ? 't' : 'c';
  std::memcpy(text.data() + 2, &node.index, sizeof node.index);
  return text;
}

std::span<const NodeRef> Dag::task_after(std::uint32_t t) const {
  if (holds_task(TaskId{t})) return tasks_[task_slot(TaskId{t})].after;
  if (foreign_dropped_)
    throw Error("internal: a foreign task's dependencies asked after they were dropped");
  const std::size_t slot = foreign_slot(t);
  const std::uint32_t begin = slot == 0 ? 0 : end_at(foreign_after_ends_, slot - 1);
  const std::uint32_t end = end_at(foreign_after_ends_, slot);
  if (begin != end) return {foreign_refs_.data() + begin, end - begin};
  // None, or named before the nodes they name were added (resolve()).
  const auto late = std::lower_bound(late_foreign_after_.begin(), late_foreign_after_.end(), t,
                                     [](const std::pair<std::uint32_t, std::span<const NodeRef>>& e,
                                        std::uint32_t task) { return e.first < task; });
  return late != late_foreign_after_.end() && late->first == t ? late->second
                                                               : std::span<const NodeRef>{};
}

NodeRef Dag::add_coflow(std::string name, const CoflowLabels& labels, Time earliest_start,
                        std::span<const Flow> flows, std::vector<std::string> after) {
  Bytes bytes = 0;
  for (const Flow& f : flows) {
    check_gpu_id("coflow", name, std::max(f.src, f.dst));
    add_bytes(bytes, f.bytes);
    flow_gpus_used_ = std::max({flow_gpus_used_, f.src + 1, f.dst + 1});
  }
  const NodeRef node = next_coflow();
  Coflow c = numbered_coflow(labels, earliest_start, flows.size(), bytes);
  if (trusts_generator()) {
    add_trusted_coflow(name, node, c, flows, after);
  } else {
    add_name(name, node);
    c.name = store_name(name);
    if (whole_) {
      make_room(flows_, flows.size());
      flows_.append(flows);
      flow_count_ = flows_.size();
    } else {
      add_fragment_flows(flows);
    }
    if (!resolve_now(after, c.after)) {
      coflow_after_names_.emplace_back(node.index, std::move(after));
    }
  }
  add_bytes(total_bytes_, bytes);
  coflows_.push_back(c);
  grew();
  return node;
}

std::optional<NodeRef> Dag::referenced(std::string_view reference) const {
  NodeRef node{
      reference.size() > 1 && reference[1] == 'c' ? NodeRef::Kind::kCoflow : NodeRef::Kind::kTask,
      0};
  if (reference.size() != 2 + sizeof node.index) throw Error("internal: a malformed reference");
  std::memcpy(&node.index, reference.data() + 2, sizeof node.index);
  const std::size_t count = node.kind == NodeRef::Kind::kTask ? task_count() : coflows_.size();
  if (node.index >= count) throw Error("internal: a reference to a node not yet added");
  return node;
}

std::optional<NodeRef> Dag::find(std::string_view name) const {
  if (names_dropped_) throw Error("internal: a name looked up after the DAG dropped its names");
  return names_.find(name, name_of());
}

std::string_view Dag::name(NodeRef node) const {
  if (node.kind == NodeRef::Kind::kCoflow) {
    const CoflowId c{node.index};
    return holds_coflow(c) ? coflow(c).name : kDroppedCoflowName;
  }
  if (holds_task(TaskId{node.index})) return tasks_[task_slot(TaskId{node.index})].name;
  if (names_dropped_) return kDroppedName;
  const std::string_view name = foreign_name(foreign_slot(node.index));
  return name.empty() ? kDroppedName : name;  // empty: added unnamed
}

void Dag::drop_names() {
  names_ = NameIndex();
  foreign_name_ends_ = core::GrowingArray<std::uint32_t>();
  foreign_names_ = core::GrowingArray<char>();
  names_dropped_ = true;
}

std::string Dag::describe(NodeRef node) const {
  return std::string(node.kind == NodeRef::Kind::kTask ? "task" : "coflow") + " \"" +
         std::string(name(node)) + "\"";
}

const std::string* Dag::collect_refs(const std::vector<std::string>& names) {
  resolving_.clear();
  for (const std::string& n : names) {
    const auto ref = n.starts_with('\0') ? referenced(n) : find(n);
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
    const NodeRef node{NodeRef::Kind::kTask, task};
    if (const std::string* missing = collect_refs(names)) {
      throw Error(describe(node) + ": 'after' names \"" + *missing + "\", which does not exist");
    }
    // In add order: the foreign ones stay sorted by task.
    if (holds_task(TaskId{task})) {
      tasks_[task_slot(TaskId{task})].after = store_after(resolving_);
    } else {
      late_foreign_after_.emplace_back(task, late_foreign_refs_.copy(resolving_));
    }
  }
  for (const auto& [coflow, names] : coflow_after_names_) {
    Coflow& c = coflows_[coflow];
    if (!trusts_generator()) {
      c.after = resolve_list({NodeRef::Kind::kCoflow, coflow}, names);
      continue;
    }
    // Those it found when the coflow was added, then these: a name still
    // unknown is a coflow this fragment holds no flow of.
    std::vector<NodeRef> merged(c.after.begin(), c.after.end());
    for (const std::string& n : names) {
      const std::optional<NodeRef> ref = find(n);
      if (ref && keeps_trusted(*ref) &&
          std::find(merged.begin(), merged.end(), *ref) == merged.end()) {
        merged.push_back(*ref);
      }
    }
    c.after = store_after(merged);
  }
  std::vector<PendingAfter>().swap(task_after_names_);
  std::vector<PendingAfter>().swap(coflow_after_names_);
  // The flows' array grew by doubling: what it has not filled goes back.
  flows_.shrink_to_fit();
  std::vector<Flow>().swap(kept_);
  resolved_ = true;
}

CoflowId Dag::coflow_of(FlowId flow) const {
  const auto it = std::upper_bound(coflows_.begin(), coflows_.end(), flow,
                                   [](FlowId f, const Coflow& c) { return f < c.first_flow; });
  return held_coflow_id(static_cast<std::size_t>(it - coflows_.begin() - 1));
}

GpuId Dag::gpus_used() const { return std::max(flow_gpus_used_, task_gpus_used_); }

Bytes Dag::total_bytes() const { return total_bytes_; }

std::span<const Flow> Dag::all_flows() const {
  if (!whole_) throw Error("internal: every flow asked of a DAG that kept only some");
  return flows_;
}

bool Dag::touches(const Coflow& c, GpuId gpu) const {
  for (const Flow& f : flows_of(c)) {
    if (f.src == gpu || f.dst == gpu) return true;
  }
  return false;
}

void Dag::mark_senders(const Coflow& c, SenderMarks& marks) const {
  ++marks.stamp;  // fewer than 2^32 coflows: a stamp is never reused
  for (const Flow& f : flows_of(c)) {
    // Another rank's sender is left to its fragment.
    if (f.src < marks.by_gpu.size() && owns(f.src)) marks.by_gpu[f.src] = marks.stamp;
  }
}

bool Dag::concerns_a_sender(NodeRef dep, const SenderMarks& marks) const {
  if (dep.kind == NodeRef::Kind::kTask) return marks.marked(task_gpu(TaskId{dep.index}));
  for (const Flow& f : flows_of(coflow(CoflowId{dep.index}))) {
    if (marks.marked(f.src) || marks.marked(f.dst)) return true;
  }
  return false;
}

Error Dag::no_sender_error(NodeRef coflow, NodeRef dep) const {
  return Error(describe(coflow) + " depends on " + describe(dep) +
               ", which involves none of its sending GPUs");
}

void Dag::validate(GpuId gpu_count) const {
  if (!resolved_) throw Error("internal: Dag::validate before resolve");
  auto gpu_error = [&](NodeRef node, const std::string& what, GpuId gpu) {
    const std::string fabric =
        gpu_count == 0 ? "the fabric has no GPUs" : "GPUs 0.." + std::to_string(gpu_count - 1);
    return Error(describe(node) + ": " + what + " GPU " + std::to_string(gpu) +
                 " is outside the fabric (" + fabric + ")");
  };
  if (foreign_dropped_) throw Error("internal: Dag::validate after its foreign tasks were dropped");
  // A fragment checks the tasks it holds: those of the GPUs it owns.
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    const ComputeTask& t = tasks_[i];
    const NodeRef node{NodeRef::Kind::kTask, held_task_id(i)};
    if (t.gpu >= gpu_count) throw gpu_error(node, "its", t.gpu);
    if (t.duration < 0) throw Error(describe(node) + ": negative duration");
    for (const NodeRef dep : t.after) {
      if (dep == node) throw Error(describe(node) + " depends on itself");
      if (dep.kind == NodeRef::Kind::kTask && task_gpu(TaskId{dep.index}) != t.gpu) {
        throw Error(describe(node) + " on GPU " + std::to_string(t.gpu) + " depends on " +
                    describe(dep) + " on GPU " + std::to_string(task_gpu(TaskId{dep.index})) +
                    "; a dependency between GPUs needs a coflow");
      }
      // A fragment holds every flow to or from the GPUs it owns.
      if (dep.kind == NodeRef::Kind::kCoflow && owns(t.gpu) &&
          !touches(coflows_[dep.index], t.gpu)) {
        throw Error(describe(node) + " on GPU " + std::to_string(t.gpu) + " depends on " +
                    describe(dep) + ", which has no flow to or from GPU " + std::to_string(t.gpu));
      }
    }
  }
  // A whole DAG checks that each coflow dependency concerns a sender here.
  SenderMarks marks{std::vector<std::uint32_t>(whole_ ? std::min(flow_gpus_used_, gpu_count) : 0),
                    0};
  for (std::uint32_t i = 0; i < coflows_.size(); ++i) {
    const Coflow& c = coflows_[i];
    const NodeRef node{NodeRef::Kind::kCoflow, i};
    if (c.flow_count == 0) throw Error(describe(node) + " has no flows");
    if (c.earliest_start < 0) throw Error(describe(node) + ": negative start time");
    for (const Flow& f : flows_of(c)) {
      // The flow's words are made only for an error: this runs for every flow.
      auto which = [&] { return "flow " + std::to_string(f.src) + "->" + std::to_string(f.dst); };
      if (f.src >= gpu_count) throw gpu_error(node, which() + ": source", f.src);
      if (f.dst >= gpu_count) throw gpu_error(node, which() + ": destination", f.dst);
      if (f.src == f.dst) throw Error(describe(node) + ": " + which() + " is a flow to itself");
      if (f.bytes <= 0) throw Error(describe(node) + ": " + which() + " has no bytes");
    }
    if (whole_ && !c.after.empty()) mark_senders(c, marks);
    for (const NodeRef dep : c.after) {
      if (dep == node) throw Error(describe(node) + " depends on itself");
      if (whole_ && !concerns_a_sender(dep, marks)) throw no_sender_error(node, dep);
    }
  }
  // Cycles: Kahn's algorithm over all nodes; whatever is left lies on or behind
  // one. The dependents are one flat array by node, counted and then filled (a
  // vector per node made this check the peak of reading a large config), in
  // 32-bit indices: a DAG of 2^32 nodes or dependencies would not fit in memory.
  // A fragment keeps every task's dependencies until then, so it finds the
  // same cycle as the whole DAG; but a task added unnamed has none here. Its
  // generator builds no cycle, and its owner checks it with its own.
  const std::size_t tasks = task_count();
  const std::size_t n = tasks + coflows_.size();
  auto id = [&](NodeRef r) {
    return static_cast<std::uint32_t>(r.kind == NodeRef::Kind::kTask ? r.index : tasks + r.index);
  };
  auto for_each_edge = [&](auto&& edge) {  // edge(dependency, dependent), in node order
    for (std::uint32_t i = 0; i < tasks; ++i) {
      for (const NodeRef dep : task_after(i)) edge(id(dep), id({NodeRef::Kind::kTask, i}));
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
    return v < tasks ? NodeRef{NodeRef::Kind::kTask, static_cast<std::uint32_t>(v)}
                     : NodeRef{NodeRef::Kind::kCoflow, static_cast<std::uint32_t>(v - tasks)};
  };
  auto deps_of = [&](std::size_t v) -> std::span<const NodeRef> {
    const NodeRef r = node_of(v);
    return r.kind == NodeRef::Kind::kTask ? task_after(r.index) : coflows_[r.index].after;
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
