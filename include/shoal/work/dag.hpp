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

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/core/growing_array.hpp"
#include "shoal/core/prefetch.hpp"
#include "shoal/core/units.hpp"
#include "shoal/work/dag_ids.hpp"
#include "shoal/work/held_set.hpp"
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
  std::uint32_t first_flow = 0;  // its flows are FlowIds first_flow .. first_flow + flow_count - 1
  std::uint32_t flow_count = 0;
  Bytes bytes = 0;  // its flows' bytes, also those a fragment does not hold
};

/// The flows and tasks a DAG keeps as it is built (Dag::set_fragment). `keep`
/// is asked while coflows are added: what it refers to must outlive the building.
struct DagFragment {
  std::function<bool(const Flow&)> keep;
  /// By GPU: those whose every flow `keep` selects (the GPUs it owns), and
  /// whose tasks it keeps.
  std::vector<bool> owns;
  /// The fabric's GPUs: a flow to or from beyond them is held everywhere,
  /// so that every rank names it in its error.
  GpuId gpus = 0;
  /// By GPU: those a flow `keep` selects can come from or go to (the GPUs
  /// it owns, and those whose arriving flows it counts). Where given, a
  /// trusted generator may count, and not make, the flows of a coflow
  /// among GPUs none of which it names (Dag::holds_no_flow_among); empty:
  /// any GPU may be.
  std::vector<bool> concerns;
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

  /// Whether add_task keeps a task of `gpu` whole: every task of a whole DAG,
  /// in a fragment those of the GPUs it owns (and those the check refuses).
  bool holds_tasks_of(GpuId gpu) const { return owns(gpu) || gpu >= fragment_gpus_; }
  /// For a generator whose dependencies are right by construction (the
  /// training generator): a fragment's task of a GPU it does not hold, with
  /// only its GPU and labels, no name and no dependencies. Its owner adds it
  /// named and checks it. reference() names it in later 'after' lists.
  NodeRef add_unnamed_task(GpuId gpu, const TaskLabels& labels = {});
  /// A dependency name that stands for `node`, added already, without a
  /// name lookup: a NUL and its index. No node's name starts with a NUL.
  static std::string reference(NodeRef node);
  /// Whether some task or coflow was added unnamed: a name find() misses may
  /// then be another rank's.
  bool has_unnamed_nodes() const { return unnamed_nodes_ > 0; }

  /// For a generator whose dependencies are right by construction (the
  /// training generator), before its first node: a fragment then keeps of
  /// each coflow only what its rank's run needs. One it holds no flow of
  /// keeps no name (a later node names it by reference(), where it names it
  /// at all) and no dependencies; one it holds a flow of but sends none in
  /// keeps its name but no dependencies; one it sends in keeps those of its
  /// dependencies that can concern a sender it owns: not another rank's
  /// task, nor a coflow it holds no flow of, nor a name resolve() still
  /// cannot find (such a coflow). The rule that each dependency concerns a
  /// sender is then the generator's: validate() checks it where the DAG is
  /// whole, and check_sender_dependencies is not needed. A whole DAG keeps
  /// everything, as without it.
  void trust_generator();
  /// Whether trust_generator() was called on a fragment.
  bool trusts_generator() const { return trusted_ && !whole_; }
  /// For a trusted generator, of a coflow whose every flow goes between two
  /// of `gpus`: whether this fragment keeps none of its flows (no GPU among
  /// them is one the fragment's `concerns` names). The generator may then
  /// count the coflow's flows instead of making them (add_unheld_coflow),
  /// as the training generator does for its EP all-to-alls.
  bool holds_no_flow_among(std::span<const GpuId> gpus) const;
  /// Such a coflow as add_coflow adds it here, from its flows' count and
  /// bytes and their largest GPU id: the same ids and bytes, no flow held,
  /// no name and no dependencies. Its flows must be ones the check accepts
  /// (none to itself, none empty), as a trusted generator's are.
  NodeRef add_unheld_coflow(const CoflowLabels& labels, Time earliest_start,
                            std::uint32_t flow_count, Bytes bytes, GpuId largest_gpu);
  /// The coflows add_unheld_coflow added.
  std::size_t counted_coflows() const { return counted_coflows_; }

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
  /// A fragment checks the flows it holds and the rules of the GPUs it owns,
  /// and leaves the coflows' dependencies to sender_dependencies.
  void validate(GpuId gpu_count) const;

  /// The node named `name`; an internal Error after drop_names.
  std::optional<NodeRef> find(std::string_view name) const;
  /// Any node's name. That of a task a fragment does not hold is valid only
  /// until the next task is added (its names lie in one growing array), and
  /// after drop_names, or where it was added unnamed, it is kDroppedName.
  std::string_view name(NodeRef node) const;
  static constexpr std::string_view kDroppedName = "(a task of another rank)";
  static constexpr std::string_view kDroppedCoflowName = "(a coflow of other ranks)";
  /// Once the workload is checked and what a config names in it is found:
  /// frees the index of names and the names of the tasks it does not hold,
  /// which every rank kept for the whole DAG. Its own tasks and every coflow
  /// keep their names, for the reports. No node can be added after it.
  void drop_names();
  /// The tasks it holds, in order: in a whole DAG every task, by TaskId
  /// (held_task_id gives a fragment's ids).
  const std::vector<ComputeTask>& tasks() const { return tasks_; }
  /// Tasks of the DAG, held or not.
  std::size_t task_count() const { return whole_ ? tasks_.size() : held_tasks_.size(); }
  bool holds_task(TaskId task) const { return whole_ || held_tasks_.holds(task); }
  /// A task's place among those it holds (its TaskId in a whole DAG).
  std::size_t task_slot(TaskId task) const {
    assert(holds_task(task));
    return whole_ ? std::size_t{task} : held_tasks_.slot(task);
  }
  TaskId held_task_id(std::size_t slot) const {
    return TaskId{static_cast<std::uint32_t>(whole_ ? slot : held_task_ids_[slot])};
  }
  /// A task it holds.
  const ComputeTask& task(TaskId task) const { return tasks_[task_slot(task)]; }
  /// Any task's GPU, held or not.
  GpuId task_gpu(TaskId task) const {
    return holds_task(task) ? tasks_[task_slot(task)].gpu : foreign_gpu(task);
  }
  /// Over every task, held or not: the largest iteration label plus one, and
  /// the largest job label plus one of the training tasks (kind not kOther);
  /// 0 for none.
  std::uint32_t task_iterations() const { return task_iterations_; }
  std::uint32_t training_jobs() const { return training_jobs_; }
  /// The coflows it holds, in order: every coflow, by CoflowId, until a
  /// fragment drops those it holds no flow of (drop_unheld_coflows); then
  /// held_coflow_id gives their ids. Arrays kept per coflow are by slot.
  const std::vector<Coflow>& coflows() const { return coflows_; }
  /// Coflows of the DAG, held or not.
  std::size_t coflow_count() const {
    return coflows_dropped_ ? held_coflows_.size() : coflows_.size();
  }
  bool holds_coflow(CoflowId c) const { return !coflows_dropped_ || held_coflows_.holds(c); }
  /// A coflow's place among those it holds (its CoflowId until the drop).
  std::size_t coflow_slot(CoflowId c) const {
    assert(holds_coflow(c));
    return coflows_dropped_ ? held_coflows_.slot(c) : std::size_t{c};
  }
  CoflowId held_coflow_id(std::size_t slot) const {
    return CoflowId{static_cast<std::uint32_t>(coflows_dropped_ ? held_coflow_ids_[slot] : slot)};
  }
  /// A coflow it holds.
  const Coflow& coflow(CoflowId c) const { return coflows_[coflow_slot(c)]; }
  /// The coflows it holds with ids below `id` (id <= coflow_count()).
  std::size_t coflows_held_below(std::uint32_t id) const {
    return coflows_dropped_ ? held_coflows_.slot(id) : std::size_t{id};
  }

  /// Every flow, by FlowId, in a whole DAG (an internal Error in a fragment).
  std::span<const Flow> all_flows() const;
  /// The flows of `c` it holds, in order: in a whole DAG all of them, FlowIds
  /// c.first_flow on (for_each_flow gives their ids).
  std::span<const Flow> flows_of(const Coflow& c) const {
    if (whole_) return std::span<const Flow>(flows_).subspan(c.first_flow, c.flow_count);
    const std::size_t first = slot(FlowId{c.first_flow});
    return std::span<const Flow>(flows_).subspan(first,
                                                 slot(FlowId{c.first_flow + c.flow_count}) - first);
  }
  /// Calls fn(FlowId, const Flow&) for each flow of `c` it holds, in order.
  template <class Fn>
  void for_each_flow(const Coflow& c, Fn&& fn) const {
    const std::span<const Flow> held = flows_of(c);
    std::size_t i = 0;
    for (std::uint32_t f = c.first_flow; i < held.size(); ++f) {
      if (holds(FlowId{f})) fn(FlowId{f}, held[i++]);
    }
  }
  /// Flows of the DAG, held or not.
  std::size_t flow_count() const { return flow_count_; }
  /// Flows its array holds before it grows (what the growth check watches).
  std::size_t flow_capacity() const { return flows_.capacity(); }
  /// Whether the DAG holds every flow (it is not a fragment).
  bool whole() const { return whole_; }
  /// Whether it holds `flow`.
  bool holds(FlowId flow) const { return whole_ || held_flows_.holds(flow); }
  /// A flow it holds.
  const Flow& flow(FlowId flow) const { return flows_[held_index(flow)]; }
  /// `flow` if it holds it, else nullptr: a switch's rank may carry cells of
  /// flows it does not hold (net/transit_routes.hpp).
  const Flow* find_flow(FlowId flow) const {
    if (whole_) return &flows_[flow];
    return held_flows_.holds(flow) ? &flows_[held_flows_.slot(flow)] : nullptr;
  }
  /// Fetches what find_flow reads first: the flow in a whole DAG, what the
  /// held set says of it (whether, and where) in a fragment.
  void prefetch_find_flow(FlowId flow) const {
    if (whole_) {
      core::prefetch(&flows_[flow]);
    } else {
      held_flows_.prefetch(flow);
    }
  }

  /// Before the first node: the DAG keeps only the flows `fragment.keep`
  /// selects as it is built (a rank keeps those it sends, receives or
  /// counts: exec/fragment.hpp), and any flow the check would refuse. Each
  /// coflow keeps its bytes, held or not; a held flow is found by a count of
  /// the held flows before it (HeldSet). It holds the tasks of the GPUs it owns, and
  /// those the check would refuse; of another task, only its name and GPU,
  /// and its dependencies until drop_foreign_dependencies (for the check for
  /// cycles, which spans GPUs); of one added unnamed, only its GPU.
  void set_fragment(DagFragment fragment);
  /// After validate(): frees the dependencies of the tasks it does not hold,
  /// and where it trusts its generator their GPUs too (none of its nodes
  /// then waits on another rank's task).
  void drop_foreign_dependencies();
  /// After check_sender_dependencies: frees the dependencies of the coflows
  /// in which no GPU it owns sends a flow. Only a sender's rank waits on a
  /// coflow's dependencies (exec/dependency_tracker.hpp); kept for every
  /// coflow, they would be on every rank. A whole DAG keeps them.
  void drop_unsent_coflow_dependencies();
  /// After drop_unsent_coflow_dependencies and drop_names: a fragment keeps
  /// only the coflows it holds a flow of, and their names and its own tasks'
  /// (a rank of a training job holds an eighth of the coflows at 8 ranks).
  /// CoflowIds stay the DAG's; coflow_slot finds a held one's place. Every
  /// node a held task or coflow waits on is held: a task's GPU, or a sender,
  /// has a flow in it (the rules above).
  void drop_unheld_coflows();
  /// Whether drop_unheld_coflows has run: coflows() is then a fragment's.
  bool coflows_dropped() const { return coflows_dropped_; }
  /// The flows it holds.
  std::size_t held_count() const { return flows_.size(); }
  /// A flow's place among those it holds (its FlowId in a whole DAG): for
  /// arrays a rank keeps only for its own flows.
  std::size_t held_index(FlowId flow) const {
    assert(holds(flow));
    return whole_ ? std::size_t{flow} : slot(flow);
  }
  /// Whether it holds every flow to or from `gpu` (every GPU of a whole DAG):
  /// the GPUs whose locality rules it checks.
  bool owns(GpuId gpu) const { return whole_ || (gpu < owns_.size() && owns_[gpu]); }

  /// A fragment's share of the rule that each dependency of a coflow concerns
  /// one of its senders, which validate() leaves to this pair: a bit per
  /// dependency (coflows in order, each's in order), set where it concerns a
  /// sender this DAG owns. With the bits of every rank's fragment OR'd
  /// together, check_sender_dependencies throws for the first one unset.
  std::vector<std::uint64_t> sender_dependencies() const;
  void check_sender_dependencies(std::span<const std::uint64_t> concerned) const;

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
  /// The next coflow's node, with room for it.
  NodeRef next_coflow() {
    make_room(coflows_, 1);
    return {NodeRef::Kind::kCoflow, static_cast<std::uint32_t>(coflows_.size())};
  }
  /// The next coflow, its flows numbered from the next flow id.
  Coflow numbered_coflow(const CoflowLabels& labels, Time earliest_start, std::size_t flow_count,
                         Bytes bytes) const {
    Coflow c;
    c.labels = labels;
    c.earliest_start = earliest_start;
    c.first_flow = static_cast<std::uint32_t>(flow_count_);
    c.flow_count = static_cast<std::uint32_t>(flow_count);
    c.bytes = bytes;
    return c;
  }

  std::string_view store_name(std::string_view name) {
    const std::span<const char> chars = name_chars_.copy(name);
    return {chars.data(), chars.size()};
  }
  std::span<const NodeRef> store_after(const std::vector<NodeRef>& refs) {
    return after_refs_.copy(refs);
  }

  std::vector<ComputeTask> tasks_;
  std::vector<Coflow> coflows_;
  // Every flow by FlowId, or in a fragment the held ones in order; grown in
  // place where the heap can (core/growing_array.hpp).
  core::GrowingArray<Flow> flows_;
  std::size_t flow_count_ = 0;
  Bytes total_bytes_ = 0;
  GpuId flow_gpus_used_ = 0;  // its flows' largest GPU id plus one
  bool whole_ = true;
  // A bit per flow held, and the held flows before each 64 (a word past the
  // last flow, so that slot(flow_count()) is the held count).
  HeldSet held_flows_;
  std::function<bool(const Flow&)> keep_;
  std::vector<bool> owns_;
  std::vector<bool> concerns_;
  GpuId fragment_gpus_ = 0;
  std::size_t counted_coflows_ = 0;
  std::vector<Flow> kept_;  // a coflow's held flows, on their way in
  /// Adds `flows` (a coflow's) to a fragment: those keep_ selects and those
  /// the check would refuse are held, and every flow numbered.
  void add_fragment_flows(std::span<const Flow> flows);
  /// A coflow's senders that it owns, marked by GPU: each dependency is then
  /// tested in one pass over its own flows (a test per sender and flow took
  /// time that grew with the square of a coflow's flows).
  struct SenderMarks {
    std::vector<std::uint32_t> by_gpu;  // the stamp of the coflow last marked
    std::uint32_t stamp = 0;
    bool marked(GpuId gpu) const { return gpu < by_gpu.size() && by_gpu[gpu] == stamp; }
  };
  /// Marks the senders of `c` it owns below `marks.by_gpu.size()`.
  void mark_senders(const Coflow& c, SenderMarks& marks) const;
  /// Whether dependency `dep` concerns one of the senders last marked.
  bool concerns_a_sender(NodeRef dep, const SenderMarks& marks) const;
  Error no_sender_error(NodeRef coflow, NodeRef dep) const;
  /// Whether `c` has a flow it holds to or from `gpu`.
  bool touches(const Coflow& c, GpuId gpu) const;
  /// The held flows before `flow` (its place among them if held).
  std::size_t slot(FlowId flow) const { return held_flows_.slot(flow); }
  // A fragment's tasks: which it holds (their ids), and the others' GPUs and
  // names by their order among the others, with their dependencies until
  // drop_foreign_dependencies. The others' names lie end to end in
  // foreign_names_, each ending where foreign_name_ends_ says, until
  // drop_names: at most 8 bytes a task, then 4, where a view and a GPU took
  // 24, for the tasks of every other rank.
  HeldSet held_tasks_;
  std::vector<std::uint32_t> held_task_ids_;
  // These grow in place (core/growing_array.hpp): they hold an entry for
  // every task of every other rank, and a vector's growth would hold the old
  // array beside the new, at the build's peak.
  core::GrowingArray<GpuId> foreign_gpus_;
  core::GrowingArray<std::uint32_t> foreign_name_ends_;
  core::GrowingArray<char> foreign_names_;
  std::string_view foreign_name(std::size_t slot) const {
    const std::uint32_t begin = slot == 0 ? 0 : end_at(foreign_name_ends_, slot - 1);
    return {foreign_names_.data() + begin, end_at(foreign_name_ends_, slot) - begin};
  }
  // The ends are stored only up to the last task that has a name (or
  // dependencies): the unnamed tasks after it, a training job's every task
  // of another rank, would only repeat the last end.
  static std::uint32_t end_at(const core::GrowingArray<std::uint32_t>& ends, std::size_t slot) {
    if (slot < ends.size()) return ends[slot];
    return ends.empty() ? 0 : ends[ends.size() - 1];
  }
  /// Appends `end` as the end of foreign task `slot`, first repeating the
  /// last end for the unnamed tasks before it.
  void set_end(core::GrowingArray<std::uint32_t>& ends, std::size_t slot, std::uint32_t end) {
    make_room(ends, slot + 1 - ends.size());
    const std::uint32_t last = end_at(ends, slot);
    while (ends.size() < slot) ends.push_back(last);
    ends.push_back(end);
  }
  // The others' dependencies, end to end, each's ending where
  // foreign_after_ends_ says (4 bytes a task where a view took 16); those
  // named before the nodes they name, by task, apart.
  core::GrowingArray<std::uint32_t> foreign_after_ends_;
  core::GrowingArray<NodeRef> foreign_refs_;
  std::vector<std::pair<std::uint32_t, std::span<const NodeRef>>> late_foreign_after_;
  StableArena<NodeRef> late_foreign_refs_;
  bool foreign_dropped_ = false;
  bool foreign_gpus_dropped_ = false;
  bool unsent_dropped_ = false;  // drop_unsent_coflow_dependencies has run
  // After drop_unheld_coflows: which coflows it holds, and their ids by slot.
  bool coflows_dropped_ = false;
  HeldSet held_coflows_;
  std::vector<std::uint32_t> held_coflow_ids_;
  std::uint32_t task_iterations_ = 0;
  std::uint32_t training_jobs_ = 0;
  GpuId task_gpus_used_ = 0;
  std::size_t unnamed_nodes_ = 0;
  bool trusted_ = false;  // trust_generator()
  /// A trusted fragment's coflow: its name and its dependencies, as the doc
  /// of trust_generator() says.
  void add_trusted_coflow(std::string& name, NodeRef node, Coflow& c, std::span<const Flow> flows,
                          std::vector<std::string>& after);
  /// Whether a trusted fragment keeps a dependency on `dep` of a coflow it
  /// sends in.
  bool keeps_trusted(NodeRef dep) const;
  /// A task it does not hold: its GPU, until a trusted fragment drops them
  /// with their dependencies (an internal Error then).
  GpuId foreign_gpu(TaskId task) const;
  /// A task it does not hold: its place among those.
  std::size_t foreign_slot(std::uint32_t task) const { return task - held_tasks_.slot(task); }
  /// Where the dependencies of task `t` are (held or not).
  std::span<const NodeRef> task_after(std::uint32_t t) const;
  NameIndex names_;
  bool names_dropped_ = false;
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
  /// The node a reference() stands for.
  std::optional<NodeRef> referenced(std::string_view reference) const;
  /// Sets `after` to the references of `names` where every one names a node
  /// added already (each once, in order); false, leaving it, where one does not.
  bool resolve_now(const std::vector<std::string>& names, std::span<const NodeRef>& after);
  bool resolved_ = false;
  GrowthCheck growth_check_;
  std::uint32_t added_since_check_ = 0;
  /// Adds `more` to a sum of bytes, which is 64 bits: a workload that passes
  /// them is refused, not wrapped round.
  static void add_bytes(Bytes& sum, Bytes more) {
    if (__builtin_add_overflow(sum, more, &sum)) {
      throw Error("workload: its bytes pass what 64 bits hold (about 9.2 EB in all): " +
                  std::string("fewer iterations, micro-batches or GPUs, or smaller messages"));
    }
  }
  void grew() {
    if (growth_check_ && ++added_since_check_ == 4096) {
      added_since_check_ = 0;
      growth_check_(*this, 0);
    }
  }
  /// Grows `v` to hold `more` elements, doubling at least, after the growth
  /// check has seen what the new array takes: the guard sees a growth before it
  /// happens, not after.
  template <class Array>
  void make_room(Array& v, std::size_t more) {
    if (v.size() + more <= v.capacity()) return;
    const std::size_t capacity = std::max(v.size() + more, 2 * v.capacity());
    if (growth_check_) {
      growth_check_(*this, std::uint64_t{capacity} * sizeof(typename Array::value_type));
    }
    v.reserve(capacity);
  }
};

}  // namespace shoal::work
