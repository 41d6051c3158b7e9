// A workload as a DAG of compute tasks and coflows, the one format every
// workload source produces (hand-written TOML, traffic patterns, htsim
// connection matrices, later the training generator).
//
// Every dependency is local to a GPU, because a GPU can only learn of progress
// elsewhere through the network:
// - a task runs on one GPU; it may wait for tasks on that GPU and for coflows in
//   which that GPU sends or receives a flow (satisfied when all of those flows
//   are complete there);
// - a coflow's flow from GPU s waits for the coflow's dependencies that concern
//   s: tasks on s and coflows in which s has a flow. Each dependency must concern
//   at least one of the coflow's senders.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shoal/core/units.hpp"
#include "shoal/work/dag_ids.hpp"
#include "shoal/work/name_index.hpp"
#include "shoal/work/stable_arena.hpp"

namespace shoal::work {

/// kCp (context parallelism's ring attention, Ulysses' all-to-alls) comes last
/// so that the other types keep their numbers in earlier outputs.
enum class CoflowType : std::uint8_t { kEp, kPp, kDp, kTp, kOther, kCp };
inline constexpr std::size_t kCoflowTypes = 6;

/// "EP", "PP", "DP", "TP", "OTHER", "CP" (also lower case); an Error lists the choices.
CoflowType parse_coflow_type(std::string_view text);
std::string_view coflow_type_name(CoflowType type);

struct Flow {
  GpuId src = 0;
  GpuId dst = 0;
  Bytes bytes = 0;
};

enum class TaskKind : std::uint8_t { kOther, kForward, kBackward, kOptimizer };

/// Where a task sits in a training job (all 0 / kOther for hand-written DAGs).
struct TaskLabels {
  TaskKind kind = TaskKind::kOther;
  std::uint32_t job = 0;
  std::uint32_t iteration = 0;
  std::uint32_t micro_batch = 0;
  std::uint32_t layer = 0;
};

/// A node's name and dependencies are views of its DAG's storage (StableArena):
/// valid while the DAG lives.
struct ComputeTask {
  std::string_view name;
  GpuId gpu = 0;
  Time duration = 0;
  std::span<const NodeRef> after;
  TaskLabels labels;
};

/// What a policy keys a coflow on.
struct CoflowLabels {
  CoflowType type = CoflowType::kOther;
  std::uint32_t job = 0;
  std::uint32_t iteration = 0;
  std::uint32_t micro_batch = 0;
  std::uint32_t layer = 0;
  std::uint32_t stage = 0;
};

struct Coflow {
  std::string_view name;
  CoflowLabels labels;
  Time earliest_start = 0;  // its flows start no earlier, whatever their dependencies
  std::span<const NodeRef> after;
  std::uint32_t first_flow = 0;  // its flows are flows()[first_flow, first_flow + flow_count)
  std::uint32_t flow_count = 0;
};

class Dag {
 public:
  Dag() = default;
  // Its nodes point into its own storage: a copy would point into the original's.
  Dag(const Dag&) = delete;
  Dag& operator=(const Dag&) = delete;
  Dag(Dag&&) = default;
  Dag& operator=(Dag&&) = default;

  /// Adds a node; names must be unique across tasks and coflows (an Error names a
  /// duplicate). Dependencies are given by name: those of nodes added already
  /// resolve at once, the rest in resolve().
  NodeRef add_task(std::string name, GpuId gpu, Time duration, std::vector<std::string> after,
                   const TaskLabels& labels = {});
  NodeRef add_coflow(std::string name, const CoflowLabels& labels, Time earliest_start,
                     std::span<const Flow> flows, std::vector<std::string> after);

  /// The resource guard watching a large DAG grow (it throws to stop the
  /// build): called with 0 every 4,096 nodes added, and, just before the
  /// tasks, coflows or flows grow their array, with the bytes the new array
  /// will take (the old one is still held then). Empty: no check.
  using GrowthCheck = std::function<void(const Dag&, std::uint64_t growing)>;
  void set_growth_check(GrowthCheck check) { growth_check_ = std::move(check); }

  /// Turns dependency names into references (of the nodes added since the
  /// last call); an Error names an unknown one. Then frees the names.
  void resolve();

  /// Checks the rules above against a fabric of `gpu_count` GPUs: GPU ids in
  /// range, no flow to itself, no empty flow or coflow, local dependencies, no
  /// cycle. The first problem is an Error naming the node (and the flow or GPU).
  void validate(GpuId gpu_count) const;

  std::optional<NodeRef> find(std::string_view name) const;
  std::string_view name(NodeRef node) const;
  const std::vector<ComputeTask>& tasks() const { return tasks_; }
  const std::vector<Coflow>& coflows() const { return coflows_; }
  const std::vector<Flow>& flows() const { return flows_; }
  std::span<const Flow> flows_of(const Coflow& c) const {
    return std::span<const Flow>(flows_).subspan(c.first_flow, c.flow_count);
  }
  /// The coflow whose flows hold `flow` (a binary search over the coflows).
  CoflowId coflow_of(FlowId flow) const;
  /// Largest GPU id used plus one (0 for an empty DAG).
  GpuId gpus_used() const;
  Bytes total_bytes() const;

 private:
  void add_name(const std::string& name, NodeRef node);
  /// For the name index: a node's name, as the node holds it.
  NameIndex::NameOf name_of() const {
    return [this](NodeRef n) -> std::string_view { return name(n); };
  }
  std::string describe(NodeRef node) const;

  std::string_view store_name(std::string_view name) {
    const std::span<const char> chars = name_chars_.copy(name);
    return {chars.data(), chars.size()};
  }
  std::span<const NodeRef> store_after(const std::vector<NodeRef>& refs) {
    return after_refs_.copy(refs);
  }

  std::vector<ComputeTask> tasks_;
  std::vector<Coflow> coflows_;
  std::vector<Flow> flows_;
  NameIndex names_;
  StableArena<char> name_chars_;
  StableArena<NodeRef> after_refs_;
  // The dependency names of the nodes that named a node not yet added, for
  // resolve(), by task or coflow index in the order they were added. Others
  // are resolved as they are added: holding every node's names until the
  // whole DAG is built took more memory than the DAG.
  using PendingAfter = std::pair<std::uint32_t, std::vector<std::string>>;
  std::vector<PendingAfter> task_after_names_;
  std::vector<PendingAfter> coflow_after_names_;
  std::vector<NodeRef> resolving_;  // collect_refs's result
  /// Puts the references of `names` in resolving_, each once, in order; the
  /// first name no node has yet, or nullptr.
  const std::string* collect_refs(const std::vector<std::string>& names);
  /// Sets `after` to the references of `names` where every one names a node
  /// added already (each once, in order); false, leaving it, where one does not.
  bool resolve_now(const std::vector<std::string>& names, std::span<const NodeRef>& after);
  bool resolved_ = false;
  GrowthCheck growth_check_;
  std::uint32_t added_since_check_ = 0;
  void grew() {
    if (growth_check_ && ++added_since_check_ == 4096) {
      added_since_check_ = 0;
      growth_check_(*this, 0);
    }
  }
  /// Grows `v` to hold `more` elements, doubling at least, after the growth
  /// check has seen what the new array takes: the guard sees a growth before it
  /// happens, not after.
  template <class T>
  void make_room(std::vector<T>& v, std::size_t more) {
    if (v.size() + more <= v.capacity()) return;
    const std::size_t capacity = std::max(v.size() + more, 2 * v.capacity());
    if (growth_check_) growth_check_(*this, std::uint64_t{capacity} * sizeof(T));
    v.reserve(capacity);
  }
};

}  // namespace shoal::work
