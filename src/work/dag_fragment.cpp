// What a DAG fragment keeps (work/dag.hpp): the fragment a rank builds, its
// flows, a trusted generator's coflows added as they are needed here, the
// drops once the checks are done, and the sender-dependency check that
// spans the ranks' fragments.
#include "shoal/work/dag.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "shoal/core/error.hpp"

namespace shoal::work {

GpuId Dag::foreign_gpu(TaskId task) const {
  if (foreign_gpus_dropped_)
    throw Error("internal: another rank's task's GPU asked after the drop");
  return foreign_gpus_[foreign_slot(task)];
}

void Dag::drop_foreign_dependencies() {
  if (whole_) return;
  if (trusted_) {
    foreign_gpus_ = core::GrowingArray<GpuId>();
    foreign_gpus_dropped_ = true;
  }
  foreign_after_ends_ = core::GrowingArray<std::uint32_t>();
  foreign_refs_ = core::GrowingArray<NodeRef>();
  std::vector<std::pair<std::uint32_t, std::span<const NodeRef>>>().swap(late_foreign_after_);
  late_foreign_refs_ = StableArena<NodeRef>();
  foreign_dropped_ = true;
}

void Dag::drop_unsent_coflow_dependencies() {
  if (whole_) return;
  // The kept lists move to an arena of their own; the old one goes whole.
  StableArena<NodeRef> kept;
  for (ComputeTask& t : tasks_) t.after = kept.copy(t.after);
  for (Coflow& c : coflows_) {
    const std::span<const Flow> held = flows_of(c);
    const bool sends =
        std::any_of(held.begin(), held.end(), [&](const Flow& f) { return owns(f.src); });
    c.after = sends ? kept.copy(c.after) : std::span<const NodeRef>{};
  }
  after_refs_ = std::move(kept);
  unsent_dropped_ = true;
}

void Dag::drop_unheld_coflows() {
  if (whole_ || coflows_dropped_) return;
  if (!unsent_dropped_ || !names_dropped_) {
    throw Error("internal: coflows dropped before their dependencies and names");
  }
  std::size_t held = 0;
  for (const Coflow& c : coflows_) held += flows_of(c).empty() ? 0 : 1;
  // The held coflows' and tasks' names move to an arena of their own; the
  // old one, with every other coflow's, goes whole.
  StableArena<char> names;
  auto keep_name = [&](std::string_view& name) {
    const std::span<const char> chars = names.copy(name);
    name = {chars.data(), chars.size()};
  };
  std::vector<Coflow> kept;
  kept.reserve(held);
  held_coflows_.clear();
  held_coflow_ids_.reserve(held);
  for (std::uint32_t i = 0; i < coflows_.size(); ++i) {
    const bool holds = !flows_of(coflows_[i]).empty();
    held_coflows_.add(holds);
    if (!holds) continue;
    kept.push_back(coflows_[i]);
    keep_name(kept.back().name);
    held_coflow_ids_.push_back(i);
  }
  for (ComputeTask& t : tasks_) keep_name(t.name);
  coflows_ = std::move(kept);
  name_chars_ = std::move(names);
  coflows_dropped_ = true;
}

void Dag::trust_generator() {
  if (trusted_) return;
  if (!coflows_.empty() || task_count() > 0) {
    throw Error("internal: a generator trusted after the DAG's first node");
  }
  trusted_ = true;
}

bool Dag::keeps_trusted(NodeRef dep) const {
  if (dep.kind == NodeRef::Kind::kTask) return holds_task(TaskId{dep.index});
  if (dep.index >= coflows_.size()) return true;  // itself: validate() names it
  const Coflow& d = coflows_[dep.index];
  return !flows_of(d).empty();
}

void Dag::add_trusted_coflow(std::string& name, NodeRef node, Coflow& c,
                             std::span<const Flow> flows, std::vector<std::string>& after) {
  // The flows first: what it holds of them decides what it keeps.
  const std::size_t held_before = flows_.size();
  add_fragment_flows(flows);
  const bool holds = flows_.size() > held_before;
  if (!holds) {
    // Neither its name nor its dependencies: no node of this fragment waits on it.
    c.name = kDroppedCoflowName;
    resolved_ = false;
    ++unnamed_nodes_;
    return;
  }
  add_name(name, node);
  c.name = store_name(name);
  const bool sends =
      std::any_of(kept_.begin(), kept_.end(), [&](const Flow& f) { return owns(f.src); });
  if (!sends) return;
  // What it finds now, less what concerns no sender here; the names it does
  // not find wait for resolve(), which drops those it still cannot find.
  resolving_.clear();
  std::vector<std::string> missing;
  for (std::string& n : after) {
    const std::optional<NodeRef> ref = n.starts_with('\0') ? referenced(n) : find(n);
    if (!ref) {
      missing.push_back(std::move(n));
    } else if (keeps_trusted(*ref) &&
               std::find(resolving_.begin(), resolving_.end(), *ref) == resolving_.end()) {
      resolving_.push_back(*ref);
    }
  }
  c.after = store_after(resolving_);
  if (!missing.empty()) coflow_after_names_.emplace_back(node.index, std::move(missing));
}

void Dag::set_fragment(DagFragment fragment) {
  if (!whole_ || !coflows_.empty() || !tasks_.empty()) {
    throw Error("internal: a fragment set after its first node");
  }
  keep_ = std::move(fragment.keep);
  owns_ = std::move(fragment.owns);
  concerns_ = std::move(fragment.concerns);
  fragment_gpus_ = fragment.gpus;
  held_flows_.clear();
  held_tasks_.clear();
  whole_ = false;
}

bool Dag::holds_no_flow_among(std::span<const GpuId> gpus) const {
  if (!trusts_generator() || concerns_.empty()) return false;
  // Beyond the fabric a flow is held everywhere (add_fragment_flows).
  return std::none_of(gpus.begin(), gpus.end(), [&](GpuId g) {
    return g >= fragment_gpus_ || g >= concerns_.size() || concerns_[g];
  });
}

NodeRef Dag::add_unheld_coflow(const CoflowLabels& labels, Time earliest_start,
                               std::uint32_t flow_count, Bytes bytes, GpuId largest_gpu) {
  if (!trusts_generator()) throw Error("internal: a coflow counted outside a trusted fragment");
  if (flow_count > 0) flow_gpus_used_ = std::max(flow_gpus_used_, largest_gpu + 1);
  const NodeRef node = next_coflow();
  Coflow c = numbered_coflow(labels, earliest_start, flow_count, bytes);
  // As add_trusted_coflow keeps one it holds no flow of.
  c.name = kDroppedCoflowName;
  resolved_ = false;
  ++unnamed_nodes_;
  flow_count_ += flow_count;
  held_flows_.add_unheld(flow_count);
  add_bytes(total_bytes_, bytes);
  coflows_.push_back(c);
  ++counted_coflows_;
  grew();
  return node;
}

void Dag::add_fragment_flows(std::span<const Flow> flows) {
  kept_.clear();
  for (const Flow& f : flows) {
    ++flow_count_;
    // A flow the check refuses is held everywhere, so that every rank names it.
    const bool refused =
        f.src >= fragment_gpus_ || f.dst >= fragment_gpus_ || f.src == f.dst || f.bytes <= 0;
    const bool held = refused || keep_(f);
    if (held) kept_.push_back(f);
    held_flows_.add(held);
  }
  make_room(flows_, kept_.size());
  flows_.append(kept_);
}

namespace {
// A coflow's dependencies in an order every rank shares: the training
// generator names another rank's task by reference, and sorts each list by
// what names it, so the ranks' lists hold the same nodes in different orders.
bool node_less(NodeRef a, NodeRef b) {
  return std::pair(a.kind, a.index) < std::pair(b.kind, b.index);
}
void in_node_order(std::span<const NodeRef> after, std::vector<NodeRef>& sorted) {
  sorted.assign(after.begin(), after.end());
  std::sort(sorted.begin(), sorted.end(), node_less);
}
}  // namespace

std::vector<std::uint64_t> Dag::sender_dependencies() const {
  if (unsent_dropped_) {
    throw Error("internal: sender dependencies asked after the unsent coflows' were dropped");
  }
  std::size_t count = 0;
  for (const Coflow& c : coflows_) count += c.after.size();
  std::vector<std::uint64_t> bits(count / 64 + 1, 0);
  SenderMarks marks{
      std::vector<std::uint32_t>(std::min<std::size_t>(flow_gpus_used_, owns_.size())), 0};
  std::vector<NodeRef> sorted;
  std::size_t k = 0;
  for (const Coflow& c : coflows_) {
    if (!c.after.empty()) mark_senders(c, marks);
    in_node_order(c.after, sorted);
    for (const NodeRef dep : sorted) {
      if (concerns_a_sender(dep, marks)) bits[k / 64] |= std::uint64_t{1} << (k % 64);
      ++k;
    }
  }
  return bits;
}

void Dag::check_sender_dependencies(std::span<const std::uint64_t> concerned) const {
  if (unsent_dropped_) {
    throw Error("internal: sender dependencies checked after the unsent coflows' were dropped");
  }
  std::vector<NodeRef> sorted;
  std::size_t first = 0;  // the coflow's first bit
  for (std::uint32_t i = 0; i < coflows_.size(); ++i) {
    const std::span<const NodeRef> after = coflows_[i].after;
    in_node_order(after, sorted);
    // The first refused in the coflow's own order, as validate() names it.
    for (const NodeRef dep : after) {
      const auto at = std::lower_bound(sorted.begin(), sorted.end(), dep, node_less);
      const std::size_t k = first + static_cast<std::size_t>(at - sorted.begin());
      if ((concerned[k / 64] >> (k % 64) & 1) == 0) {
        throw no_sender_error({NodeRef::Kind::kCoflow, i}, dep);
      }
    }
    first += after.size();
  }
}

}  // namespace shoal::work
