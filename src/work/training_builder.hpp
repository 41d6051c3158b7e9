// Builds one training job's DAG (work/training_dag.hpp): placement, the
// pipeline schedule with each layer's compute and its TP and PP coflows
// (training_dag.cpp), its EP all-to-alls (training_ep.cpp), the
// data-parallel gradient reduction, the optimizer step and the parameter
// all-gathers (training_dp.cpp); overlap's pairs and chunks
// (training_overlap.cpp) and per-step expert swaps (training_swap.cpp).
// Private to the work layer.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "expert_swap.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/name_lists.hpp"
#include "shoal/work/node_table.hpp"
#include "shoal/work/pipeline_schedule.hpp"
#include "shoal/work/routing_file.hpp"
#include "shoal/work/sequence_lengths.hpp"
#include "shoal/work/training_job.hpp"

namespace shoal::work {

class TrainingBuilder {
 public:
  /// Builds from `job.rank_view()`: one CP rank's tokens, cp x dp data ranks.
  TrainingBuilder(const JobSpec& job, Dag& dag);
  void build();

 private:
  /// What each GPU of the stage last did or waits for (names in the DAG).
  using Ready = std::vector<std::vector<std::string>>;  // by stage-local index
  /// Gradients of one buffer (dense or experts) of one stage reduced together,
  /// as Megatron's buckets: whole layers, in backward order.
  struct Bucket {
    std::uint32_t top = 0;     // the first layer whose gradients it takes (the highest)
    std::uint32_t bottom = 0;  // the last (the lowest): its backward completes the bucket
    bool experts = false;
    std::uint64_t parameters = 0;  // on one GPU (dense: its TP shard; experts: its own)
  };

  // --- context and sequence parallelism (training_cp.cpp) ---
  /// The attention of every GPU of stage s in one layer and pass, with its
  /// CP ring (cp_overlap: in steps that overlap the ring; else after it).
  void attention_pass(std::uint32_t s, std::uint32_t mb, std::uint32_t layer, bool forward);
  /// Ring attention without overlap: each CP ring of the stage passes its K
  /// and V blocks (and in backward their gradients) around, one coflow per ring.
  void context_ring(std::uint32_t s, std::uint32_t mb, std::uint32_t layer, bool forward);
  /// Ring attention in CP steps, each exchange one coflow per ring.
  void overlapped_ring(std::uint32_t s, std::uint32_t mb, std::uint32_t layer, bool forward);
  /// The members of CP ring (t, x) of stage s in the order the blocks travel.
  std::vector<std::uint32_t> cp_ring(std::uint32_t s, std::uint32_t t, std::uint32_t x,
                                     bool forward) const;
  /// Ulysses: the all-to-all of each TP group before (`before`) or after the attention.
  void ulysses(std::uint32_t s, std::uint32_t mb, std::uint32_t layer, bool forward, bool before);
  /// Attention forward time of GPU r in micro-batch mb: with a length law, its
  /// replica's packed sequences.
  Time attention(std::uint32_t r, std::uint32_t mb, std::uint32_t layer) const;
  /// The attention's time in a pass (backward: scaled as the backward is).
  Time attention_compute(std::uint32_t r, std::uint32_t mb, std::uint32_t layer,
                         bool forward) const;
  /// GPU r's sum of squared sequence lengths in micro-batch mb (-1: no length law).
  double square_sum(std::uint32_t r, std::uint32_t mb) const;

  // --- placement (training_dag.cpp) ---
  /// Job rank <-> coordinates (order tp-ep-dp-pp).
  std::uint32_t rank(std::uint32_t tp, std::uint32_t ep, std::uint32_t edp,
                     std::uint32_t pp) const {
    return tp + p_.tp * (ep + p_.ep * (edp + edp_ * pp));
  }
  GpuId gpu(std::uint32_t r) const {
    assert(r < gpu_of_.size());
    return gpu_of_[r];
  }
  /// Job rank r's GPU under the placement order (gpu_of_ keeps them all: the
  /// generator asks for a GPU for every flow).
  GpuId place(std::uint32_t r) const;
  /// Stage-local index i (tp + TP * dp_index) -> job rank.
  std::uint32_t stage_rank(std::uint32_t s, std::uint32_t i) const { return i + p_.tp * p_.dp * s; }
  std::uint32_t local(std::uint32_t r, std::uint32_t s) const { return r - p_.tp * p_.dp * s; }
  std::uint32_t ep_of(std::uint32_t r) const { return (r / p_.tp) % p_.ep; }
  std::uint32_t edp_of(std::uint32_t r) const { return (r / (p_.tp * p_.ep)) % edp_; }

  // --- names and labels (training_dag.cpp) ---
  CoflowLabels labels(CoflowType type, std::uint32_t mb, std::uint32_t layer,
                      std::uint32_t stage) const;
  TaskLabels task_labels(TaskKind kind, std::uint32_t mb, std::uint32_t layer) const {
    return {kind, job_.id, iteration_, mb, layer + 1};
  }
  /// The start of a layer's coflow names in one micro-batch and pass: "…mB.L<layer>.f" or ".b".
  std::string pass_tag(std::uint32_t mb, std::uint32_t layer, bool forward) const;
  std::string task_name(std::uint32_t r, bool forward, std::uint32_t mb, std::uint32_t layer,
                        char part) const;
  std::string optimizer_name(std::uint32_t r, std::uint32_t it) const;
  std::string pp_name(std::uint32_t mb, std::uint32_t from_stage, bool forward,
                      std::uint32_t i) const;
  std::string group_id(std::uint32_t tp, std::uint32_t e) const {
    return std::to_string(tp) + "." + std::to_string(e);
  }
  static void dedupe(std::vector<std::string>& names);
  /// The last tasks of EP group (tp, e) of pipeline rank s's members, each once.
  std::vector<std::string> group_ready(std::uint32_t tp, std::uint32_t e, std::uint32_t s);

  // --- the pipeline and each layer (training_dag.cpp) ---
  /// Pipeline rank `s`'s steps, each a pass of its GPUs through stage `vs`
  /// (training_pipeline.cpp); `receive` and `send`: the pass waits for its
  /// input from the neighbouring stage, and sends its output on.
  void schedule_rank(std::uint32_t s);
  void forward_pass(std::uint32_t s, std::uint32_t vs, std::uint32_t mb, bool receive = true,
                    bool send = true);
  void backward_pass(std::uint32_t s, std::uint32_t vs, std::uint32_t mb, bool receive = true,
                     bool send = true);
  /// DualPipe's pair: a forward and a backward side by side.
  void overlapped(std::uint32_t s, const PipelineStep& forward, std::uint32_t f_vs,
                  const PipelineStep& backward, std::uint32_t b_vs, bool record);
  /// The weight gradients of a split backward; `record`: they complete the stage's gradients.
  void weight_pass(std::uint32_t s, std::uint32_t vs, std::uint32_t mb, bool record);
  void ffn(std::uint32_t s, std::uint32_t mb, std::uint32_t layer, bool moe, bool forward);
  /// Whether micro-batch mb's first forward of each layer waits for the
  /// previous iteration's all-gather (and expert swap) of its parameters.
  bool waits_for_parameters(std::uint32_t mb) const {
    return iteration_ > 0 &&
           (mb == 0 || (mb == 1 && job_.overlap.mode == Overlap::kDualMicroBatch));
  }

  // --- overlap (training_overlap.cpp) ---
  /// Micro-batches 2 unit and 2 unit + 1 through stage vs side by side, one
  /// forward or backward pass each (overlap = "dual-micro-batch").
  void paired(std::uint32_t s, std::uint32_t vs, std::uint32_t unit, bool forward);
  /// A MoE layer's dispatch, expert compute and combine in overlap_chunks
  /// chunks (overlap = "chunked").
  void chunked_ffn(std::uint32_t s, std::uint32_t mb, std::uint32_t layer, bool forward);

  // --- per-step expert swaps (training_swap.cpp) ---
  /// After the iteration: the swaps its loads call for, one coflow per EP
  /// group of each swapping layer, which the next iteration's experts wait on.
  void swap_experts();
  /// Members that share a server in every EP group of the job.
  std::vector<std::uint32_t> swap_classes() const;
  void tensor_parallel(std::uint32_t s, std::uint32_t mb, std::uint32_t layer, bool forward);
  /// A micro-batch's activations (forward) or gradients (backward) from
  /// virtual stage `from` to `to`, one coflow per data-parallel replica.
  void send_pp(std::uint32_t from, std::uint32_t to, std::uint32_t mb, bool forward);
  /// Adds a compute task of job rank r (slowed while it overlaps an
  /// all-to-all); returns what names it in later 'after' lists (add_task).
  std::string task(std::uint32_t r, std::string name, Time duration, std::vector<std::string> after,
                   TaskKind kind, std::uint32_t mb, std::uint32_t layer);
  /// Adds job rank r's task, whole where the DAG holds its GPU's tasks. Where
  /// another rank does (a fragment), only its GPU and labels: it needs no
  /// name, dependencies or index entry there. Returns its name, or there the
  /// reference that stands for it (Dag::reference).
  std::string add_task(std::uint32_t r, std::string name, Time duration,
                       std::vector<std::string> after, const TaskLabels& labels);
  // --- the EP all-to-all (training_ep.cpp) ---
  /// One EP all-to-all of a group: to the experts or back, in the forward or
  /// backward pass, by the job's ep_comm (dtype, de-duplication). Where a
  /// fragment holds none of its flows, they are counted, not made.
  void ep_coflow(const std::string& name, std::uint32_t s, std::uint32_t tp, std::uint32_t edp,
                 bool forward, bool to_experts, const CoflowLabels& l,
                 std::vector<std::string> after);
  /// ep_coflow's flows, into flows_.
  void ep_flows(std::uint32_t s, std::uint32_t tp, std::uint32_t edp, bool forward, bool to_experts,
                const CoflowLabels& l);
  /// ep_coflow's flows, in order, each given to sink(src, dst, bytes).
  template <class Sink>
  void ep_pairs(std::uint32_t s, std::uint32_t tp, std::uint32_t edp, bool forward, bool to_experts,
                const CoflowLabels& l, Sink&& sink);
  NodeRef ring_coflow(const std::string& name, const std::vector<std::uint32_t>& members,
                      Bytes bytes, const CoflowLabels& l, std::vector<std::string> after);
  /// Several rings in one coflow: each member sends `bytes` to the next of its ring.
  NodeRef rings_coflow(const std::string& name,
                       const std::vector<std::vector<std::uint32_t>>& rings, Bytes bytes,
                       const CoflowLabels& l, std::vector<std::string> after);
  std::vector<std::uint32_t> tp_group(std::uint32_t s, std::uint32_t ep, std::uint32_t edp) const;
  Bytes tp_bytes() const;
  /// Names the GPU of stage-local index i waits on before its next step.
  std::vector<std::string>& ready(std::uint32_t i) { return last_[i]; }

  // --- data parallelism (training_dp.cpp) ---
  /// Gradient reduce-scatters (per bucket, and per micro-batch where every
  /// micro-batch reduces), the gradient-norm barrier, each GPU's optimizer
  /// step and the parameter all-gathers that the next iteration waits on.
  void data_parallel();
  /// Stage vs's buckets, dense then experts, each in backward order.
  std::vector<Bucket> buckets(std::uint32_t vs) const;
  std::uint64_t bucket_limit(std::uint32_t vs) const;
  /// The pipeline ranks that hold stage vs (two with DualPipe).
  std::vector<std::uint32_t> holders(std::uint32_t vs) const;
  std::uint64_t dense_parameters(std::uint32_t layer) const;
  std::uint64_t expert_parameters(std::uint32_t layer) const;
  /// The DP groups of stage vs's buckets: job ranks of each group that reduces them.
  std::vector<std::vector<std::uint32_t>> dp_groups(std::uint32_t vs, bool experts) const;
  /// Each returns its last coflow: the one a later node waits on.
  NodeRef reduce_scatter(const std::string& name, const std::vector<std::uint32_t>& members,
                         Bytes bytes, const CoflowLabels& l, std::vector<std::string> after);
  NodeRef all_gather(const std::string& name, const std::vector<std::uint32_t>& members,
                     Bytes bytes, const CoflowLabels& l, std::vector<std::string> after);
  /// Hierarchical DP: the members of each server, and the rings across them
  /// (empty unless the algorithm is hierarchical and the group spreads evenly).
  std::vector<std::vector<std::uint32_t>> rings_inside(
      const std::vector<std::uint32_t>& members) const;
  std::vector<std::vector<std::uint32_t>> rings_across(
      const std::vector<std::uint32_t>& members) const;
  /// The previous iteration's all-gather of this layer's parameters on GPU r (dense or experts).
  void add_all_gather(std::vector<std::string>& after, std::uint32_t r, std::uint32_t layer,
                      bool experts);

  const JobSpec view_;  // the job as one CP rank sees it
  const std::uint32_t cp_;
  const JobSpec& job_;
  const ModelSpec& m_;
  const ParallelSpec& p_;
  Dag& dag_;
  std::uint32_t edp_;
  std::vector<std::uint32_t> stage_starts_;  // by virtual stage: its first layer (and the end)
  std::vector<double> weights_;              // the skew law's weights, member 0 the hottest
  std::vector<double> drawn_;            // weights_ permuted for one (layer, micro-batch, group)
  std::optional<RoutingTable> routing_;  // [skew] routing_file: measured weights
  std::optional<SequencePacking>
      packing_;  // a sequence length law: each micro-batch's sum of squares
  /// The EP members' weights in MoE layer `layer` of micro-batch `mb` for the
  /// expert-data-parallel group `edp`: a routing file's (the same for every
  /// group), weights_, or under drift a permutation of them drawn for this
  /// iteration, layer, micro-batch and group.
  const std::vector<double>& weights(std::uint32_t layer, std::uint32_t mb, std::uint32_t edp);
  std::array<int, 5> axes_;    // the placement order: axis indices (0 tp, 1 ep, 2 dp, 3 pp, 4 cp)
  std::vector<GpuId> gpu_of_;  // by job rank
  std::uint32_t iteration_ = 0;
  std::string prefix_;
  std::vector<Flow> flows_;
  std::vector<GpuId> member_gpus_;              // ep_coflow's group
  std::vector<Bytes> member_bytes_;             // ep_pairs's bytes to each member
  std::vector<std::vector<std::string>> last_;  // by stage-local index, for the stage being built
  std::map<std::uint32_t, std::vector<std::string>> last_of_stage_;  // by job rank
  std::vector<std::string> optimizer_;  // by job rank: the last optimizer step added (add_task)
  // By grad_key(layer, job rank, micro-batch): what its gradients of that
  // micro-batch wait on, dense and experts.
  NameLists dense_grads_, expert_grads_;
  static std::uint64_t grad_key(std::uint32_t layer, std::uint32_t r, std::uint32_t mb) {
    return std::uint64_t{r} << 40 | std::uint64_t{layer} << 20 | mb;
  }
  // (pipeline rank, stage): the micro-batch whose backward makes its gradients final.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> final_mb_;
  bool recording_grads_ = false;  // the backward being built records its gradients for the DP
  double backward_share_ = 1.0;   // ... and computes this share of its time (split: 1 - W's)
  bool overlapping_ = false;  // the tasks being built overlap an all-to-all (comm_sms slows them)
  std::optional<ExpertSwapper> swapper_;  // expert_swap = "per-step"
  // (layer, job rank): the swap coflow its experts wait on in this (the next) iteration.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> prev_swap_;
  // By gather_key(layer, job rank, experts): the all-gather of its
  // parameters, in this iteration and in the previous one.
  NodeTable ag_of_, prev_ag_;
  static std::uint64_t gather_key(std::uint32_t layer, std::uint32_t r, bool experts) {
    return std::uint64_t{r} << 33 | std::uint64_t{layer} << 1 | (experts ? 1 : 0);
  }
};

}  // namespace shoal::work
