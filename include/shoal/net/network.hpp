// The packet-level network running a workload DAG: the engine model of issue 3.
//
// Entities are the fabric's nodes. A flow is cut into cells. Every directed link
// has an egress port at its source: 8 class queues served in strict priority
// (class 0 first), round-robin across the flows of a class (or FIFO, an option
// at switches), and credit-based lossless flow control per class towards the
// next node's ingress buffer (credits return over the link, with its latency;
// nothing is ever dropped).
//
// Forwarding is cut-through: a cell may start on the next link once its head
// has arrived, and never finishes there before its tail has arrived (it then
// starts late enough to end with its tail), so downstream its tail always
// follows its head by its serialization time on the last link. Store-and-
// forward is an option.
//
// Events (tag = kind | link << 4):
//   cell head at a node via link L (payload: CellHead, net/cell_head.hpp);
//   none at a GPU for a cell it receives over a link that delivers
//   (LinkState::delivers), but for a flow's last cell
//   port free at the sending node (the port finished a cell and cells wait)
//   credit at the upstream node of L (payload class << 32 | bytes)
//   flow received at its receiver (self, at the last byte's tail)
//   flow acknowledged at its sender (from the receiver, after the path latency)
//   compute done at a GPU; coflow timer at a GPU (a sender group's start time)
//   link failed at the link's source: its queued cells and flows are re-routed
//   starvation guard at a sender: a flow waiting too long goes first at its NIC
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <functional>
#include "shoal/core/simulator.hpp"

#include "shoal/net/cell_head.hpp"
#include "shoal/net/keyed_flows.hpp"
#include "shoal/net/link_bins.hpp"
#include "shoal/net/port_queues.hpp"
#include "shoal/net/records.hpp"
#include "shoal/net/ring.hpp"
#include "shoal/net/router.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/fabric.hpp"
#include "shoal/work/dag.hpp"
#include "shoal/work/dag_runner.hpp"

namespace shoal::net {

inline constexpr int kClasses = 8;
inline constexpr Bytes kMaxBufferPerClass = Bytes{1} << 30;  // credits are counted in 32 bits

/// A link slower or longer from a time on: it applies to cells whose
/// transmission starts at or after `at`.
struct LinkPerturbation {
  topo::LinkId link = 0;
  Time at = 0;
  BitsPerSecond rate = 0;  // 0: unchanged
  Time extra_latency = 0;
  bool fail = false;  // down from `at`: nothing starts on it, routes avoid it
};

/// A straggler: compute tasks that start on the GPU at or after `at` take
/// `slowdown` times as long.
struct GpuPerturbation {
  work::GpuId gpu = 0;
  Time at = 0;
  double slowdown = 1.0;
};

struct Perturbations {
  std::vector<LinkPerturbation> links;
  std::vector<GpuPerturbation> gpus;
};

#ifdef NDEBUG
inline constexpr bool kFullChecksByDefault = false;
#else
inline constexpr bool kFullChecksByDefault = true;
#endif

struct NetworkOptions {
  Bytes cell_size = 4096;
  Bytes buffer_per_class = 512 * 1024;  // ingress buffer per port and class (credits)
  bool cut_through = true;
  LoadBalancing load_balancing = LoadBalancing::kEcmp;
  Time starvation_after = kTimeInfinity;  // a flow its NIC has not served that long goes first
  bool record = false;     // keep flow and compute rows and per-link counters for the output file
  Time link_util_bin = 0;  // with record: bytes per link per bin of this width (0: off)
  std::uint32_t link_util_top = 20;  // ... reported for this many of the busiest links
  // ... kept in at most this many bytes over all ranks (4 per link and bin);
  // past it every bin widens to twice its width.
  std::uint64_t link_util_memory = std::uint64_t{1} << 30;
  bool switch_round_robin = true;  // round-robin across flows in a class at switches; else FIFO
  // A credit that cannot change what its port does before it arrives (the port
  // keeps at least a cell of credit until then whatever it sends) is added at
  // once, without an event. Results are the same either way; off only to test that.
  bool early_credits = true;
  // A cell on its last link, into the GPU it is for, is counted as it is sent
  // (LinkState::delivers), with no event at the GPU (whose NIC takes every
  // cell) where its credit can be added early and it is not its flow's last.
  // The run is the same either way; off only to test that.
  bool deliver_on_send = true;
  // A NIC port whose own flows cannot be overtaken (no relayed cells, no flow
  // of a lower key at its GPU, no starvation guard, no failure) sends, from
  // one event, the cells that one event per cell would have sent within its
  // link's latency (kMaxBurst at most), their events keyed as those would have
  // been (a GPU's port keys its events itself). The run is the same either
  // way; off only to test that.
  bool nic_bursts = true;
  // Where routes are fixed (ECMP, no link that fails, no starvation guard), a
  // flow's lane at a port is found by (flow, hop) in a table rather than by a
  // hash of (link, class, flow) (PortQueues::by_hop). The run is the same
  // either way; off only to test that.
  bool lanes_by_hop = true;
  // The full invariants (docs/reliability.md): after every window, every port's
  // queue counters and credits recounted, its lanes found again by their keys. On in Debug builds,
  // `shoal run --check` in Release. The cheap ones (credit bounds, conservation, each flow and task
  // ending once, the end state) are always on.
  bool check = kFullChecksByDefault;
};

/// Throws an Error naming the bad option (cell size, buffer smaller than a cell).
void validate(const NetworkOptions& options);

/// Per-flow and per-task times, gathered to rank 0 by results().
struct RunResults {
  std::vector<Time> flow_start;  // when the flow became ready at its sender
  std::vector<Time> flow_end;    // last byte at the receiver; -1 if never
  std::vector<Time> task_start, task_end;
  std::vector<Time> gpu_busy;       // by GPU: time computing
  std::vector<Time> gpu_comm_wait;  // by GPU: time idle until a coflow made a task ready
  // The same split by the iteration label of the task that became ready:
  // by GPU * iterations + iteration.
  std::vector<Time> gpu_iteration_wait;
  std::uint32_t iterations = 1;
  std::int64_t bytes_delivered = 0;
  std::int64_t cell_hops = 0;  // cells sent over a link (one per cell and link crossed)
  // With NetworkOptions::record, on rank 0: by link, bytes per class (link * 8 + class) and busy
  // time.
  std::vector<std::uint64_t> link_bytes;
  std::vector<std::uint64_t> link_busy;
  // With link_util_bin, on rank 0: the busiest links (by bytes) and, per link,
  // bytes sent in each bin (link_util_links.size() x link_util_bins values).
  std::vector<topo::LinkId> link_util_links;
  std::uint64_t link_util_bins = 0;
  Time link_util_width = 0;  // on every rank: the bins' width, link_util_bin times a power of two
  std::vector<std::uint64_t> link_util_bytes;
};

class Network {
 public:
  /// `priorities`: by flow, the key its NIC orders it by and its switch class
  /// (sched::flow_priorities); empty: every flow key 0, class 0 (fair).
  Network(const topo::Fabric& fabric, const work::Dag& dag, core::Simulator& sim,
          const NetworkOptions& options, const Perturbations& perturbations = {},
          sched::FlowPriorities priorities = {});

  /// Bytes one rank's Network and engine will allocate for this fabric and DAG
  /// (per-flow, per-task and per-link state, the events of cells in flight,
  /// the output buffers): the resource guard's estimate, made before building.
  static std::uint64_t estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                      const NetworkOptions& options);

  /// Bytes one rank's /link_util bins take at most (NetworkOptions::record with
  /// link_util_bin and link_util_top; else 0), the tables of the busiest links
  /// gathered at the end included: `links_here` is how many links the rank
  /// sends on, `end` the run's end time (kTimeInfinity: none; the bins then
  /// fill their cap, link_util_memory, in the rank's share). Not in
  /// estimate_bytes, so the resource guard can name it.
  static std::uint64_t estimate_link_util_bytes(const topo::Fabric& fabric,
                                                const NetworkOptions& options,
                                                const Perturbations& perturbations,
                                                std::uint64_t links_here, Time end);

  /// How the ports' queues find a flow's lane: by (flow, hop) where every
  /// flow's route is fixed for the whole run (NetworkOptions::lanes_by_hop),
  /// a route being at most this many links; 0: by hash.
  static std::uint32_t lane_hops(const topo::Fabric& fabric, const NetworkOptions& options,
                                 const Perturbations& perturbations);

  /// The order the engine should take a window's events in for this fabric
  /// and cell size: atom by atom where the fabric is large (at least
  /// kAtomOrderLinks links between atoms: its ports' state no longer fits in a
  /// core's cache) and its fastest such link carries at least two cells
  /// within the atoms' lookahead (so that a switch has several events to
  /// handle in each sub-window); else by time. The run is the same either way;
  /// docs/performance.md, seventeenth measurement, has the figures.
  static core::EventOrder event_order_for(const topo::Fabric& fabric,
                                          const NetworkOptions& options);
  static constexpr std::size_t kAtomOrderLinks = 16384;

  /// Schedules what is ready at time 0 on this rank's GPUs.
  void initialize();

  void handle(const core::Event& ev, core::Simulator& sim);
  /// Called by the engine for each event from another rank as it arrives,
  /// before it is queued; true: taken here, never an event. A credit that
  /// could go early (credit_early) had its port been on the sender's rank is
  /// added now: the proof holds from this rank's clock on as it would from
  /// the sender's (the port's state is the same until this rank's next event),
  /// so every partition gives the same run.
  bool take_arrival(const core::Event& ev, core::Simulator& sim);

  /// Called by the engine a few events ahead: warms the port or flow state the
  /// event will touch (the run is bound by memory latency, not arithmetic).
  void prefetch(const core::Event& ev) const {
    const std::uint32_t link = ev.tag >> 4;
    switch (ev.tag & 15) {
      case kPortFree:
      case kCredit:
        prefetch_sender(link);
        core::prefetch(&own_[link]);  // at a NIC, its own flows come next
        return;
      case kCellHead: {
        const std::uint32_t flow = CellHead::flow_of(ev.payload);
        core::prefetch(&dag_.flows()[flow]);
        prefetch_credit_return(link);  // the link it came by; also its serialization time
        return;
      }
      default:
        return;
    }
  }

  /// Called 8 (stage 1), 4 (stage 2) and 2 (stage 3) events ahead, each once
  /// the stage before has brought in what it reads: for a cell, the port it
  /// will be queued at and its lane's hash slot, then the lane; for a port,
  /// the lane it will serve next (which holds its front cell), then the
  /// lane's second cell or the hash slot it empties, the port upstream that
  /// the cell's credit goes to and what delivering it reads; at a NIC its own
  /// flows' groups, then the front flow, then what is kept about that flow.
  void prefetch_stage(const core::Event& ev, int stage) const {
    switch (ev.tag & 15) {
      case kPortFree:
      case kCredit: {
        const topo::LinkId link = ev.tag >> 4;
        const Port& port = ports_[link];
        if (port.has_own) {
          const KeyedFlows& own = own_[link].flows;
          if (stage == 3) {
            // What send_own reads about its first flow, by flow id: three arrays.
            if (!own.empty()) {
              const std::uint32_t f = own.front(0);
              core::prefetch(&to_send_[f]);
              core::prefetch(&flow_key_[f]);
              core::prefetch(&flow_class_[f]);
            }
          } else {
            const void* next = stage == 1 ? own.groups_address() : own.front_address();
            if (next != nullptr) core::prefetch(next);
          }
        }
        if (port.queued == 0) return;
        const int cls = std::countr_zero(port.queued);
        const PortQueues::Turn& turn = port.turns[static_cast<std::size_t>(cls)];
        if (stage == 1) {
          core::prefetch(queues_.front_address(turn));
        } else if (stage == 2) {
          // The lane holds its front cell: where it came from and goes are known now.
          queues_.prefetch_front(turn, link, cls);
          const topo::LinkId in = queues_.front_in_link(turn);
          if (in != topo::kNoLink) prefetch_credit_return(in);
          if (links_[link].delivers) prefetch_delivery(queues_.front_flow(turn));
        }
        return;
      }
      case kCellHead: {
        if (stage == 3) return;
        const std::uint32_t flow = CellHead::flow_of(ev.payload);
        const topo::LinkId out = stage == 1 ? route_ahead(ev, flow) : remembered_route(ev);
        if (out == topo::kNoLink) {
          // At its receiver (or routed by the handler): the count it adds to.
          if (stage == 1) core::prefetch(&received_[flow]);
          return;
        }
        const int cls = CellHead::class_of(ev.payload);
        const std::uint32_t hop = CellHead::hop_of(ev.payload) + 1;  // the link it goes on
        if (stage == 1) {
          prefetch_sender(out);
          queues_.prefetch_slot(out, cls, flow, hop);
        } else {
          queues_.prefetch_push(ports_[out].turns[static_cast<std::size_t>(cls)], out, cls, flow,
                                hop);
          if (links_[out].delivers) core::prefetch(&received_[flow]);  // stage 1 fetched the link
        }
        return;
      }
      default:
        return;
    }
  }

  /// Collective: every flow's and task's times on rank 0 (empty elsewhere).
  /// Not const: the ranks' /link_util bins are widened to one width first.
  RunResults results(const core::Comm& comm);

  /// Called by the engine after every window synchronization, on every rank in
  /// step: runs the hook (the output file's periodic collective flush).
  void after_sync(core::Simulator& sim) {
    if (options_.check) check_ports();
    if (sync_hook_) sync_hook_(sim);
  }
  /// Called by the engine every 65,536 events on this rank (one rank has a
  /// single unbounded window, so after_sync alone would check too rarely).
  void every_batch(core::Simulator&) {
    if (options_.check) check_ports();
    if (batch_hook_) batch_hook_();
  }
  /// Runs `hook` every 65,536 events on this rank; it must not be collective
  /// unless the run has one rank.
  void set_batch_hook(std::function<void()> hook) { batch_hook_ = std::move(hook); }
  /// After a run in which every flow finished: this rank's ports hold no cell
  /// and have all their credit back, and every flow it received has exactly its
  /// bytes. Throws an Error naming the first violation.
  void check_end_state() const;
  void set_sync_hook(std::function<void(const core::Simulator&)> hook) {
    sync_hook_ = std::move(hook);
  }
  /// The rows recorded since the last call (NetworkOptions::record).
  std::vector<FlowRecord>& flow_records() { return flow_records_; }
  std::vector<ComputeRecord>& compute_records() { return compute_records_; }
  /// At the end: rows for this rank's flows and tasks that never finished.
  void record_unfinished();

 private:
  enum Kind : std::uint32_t {
    kCellHead = 0,
    kPortFree = 1,
    kCredit = 2,
    kFlowReceived = 3,
    kFlowAck = 4,
    kComputeDone = 5,
    kGroupStart = 6,
    kLinkFailed = 7,
    kPromote = 8,
  };
  static constexpr std::uint32_t tag(Kind k, topo::LinkId link = 0) { return k | (link << 4); }

  /// A GPU's ports (up to three) number their events in streams of their own
  /// (core::Simulator::send_from): the events of a port's n-th transmission
  /// are 3n + slot, so they have the same keys whenever they are sent, which
  /// is what lets a burst send a port's next cells from one event. A switch's
  /// events are numbered by the switch as it sends them.
  enum Slot : std::uint64_t { kHeadSlot = 0, kCreditSlot = 1, kFreeSlot = 2, kSlots = 3 };
  struct Numbers {
    std::uint32_t stream = 0;  // 0: the node's own numbers
    std::uint64_t first = 0;   // the transmission's first number
  };
  static constexpr std::size_t kMaxBurst = 16;
  static constexpr std::uint32_t kNoBurst = ~std::uint32_t{0};

  /// A NIC port's own flows, and how many transmissions it has numbered.
  struct OwnFlows {
    KeyedFlows flows;
    std::uint64_t sent = 0;
  };
  /// The cells a NIC port last sent in a burst (NetworkOptions::nic_bursts),
  /// kept to place a flow that joins its key while the burst is on the wire
  /// where one event per cell would have: behind the cells that, one at a
  /// time, would have been sent already.
  struct Burst {
    std::uint32_t key = 0;                // the key whose flows it served
    std::uint32_t count = 0;              // its transmissions
    std::uint64_t first = 0;              // its first transmission's number (OwnFlows::sent)
    std::array<Time, kMaxBurst> start{};  // each transmission's start
    // The flows it rotated to the back of its key's turn, front to back: the
    // transmission (1-based) that served each last.
    std::uint32_t tail = 0;
    std::array<std::uint8_t, kMaxBurst> last{};
  };

  /// One directed link's egress port at its source node: two cache lines, the
  /// first read by every credit and transmission, the second by queueing.
  /// `busy_until` is when the cell on the wire has left; a port-free event is
  /// scheduled only when cells wait for that moment, so an idle pipeline costs
  /// no event per cell. Its own flows (at a GPU) are in own_[link].
  struct alignas(64) Port {
    Time busy_until = 0;
    Time fail_at = kTimeInfinity;  // the link is down from then on
    std::array<std::int32_t, kClasses> credits{};
    bool free_pending = false;  // a port-free event is scheduled
    bool relay_turn = false;    // at a GPU: relayed cells go before its own flows next
    bool has_own = false;       // at a GPU: own_[link] holds flows with bytes to send
    std::uint8_t queued = 0;    // bit c: class c has cells queued here
    // Credit added early (NetworkOptions::early_credits), all classes together,
    // that may not have arrived yet; all of it has after early_until.
    std::int32_t early_bytes = 0;
    Time early_until = 0;
    std::array<PortQueues::Turn, kClasses> turns;  // the cells waiting, by class
  };
  static_assert(sizeof(Port) == 128);
  static_assert(offsetof(Port, early_until) + sizeof(Time) <= 64, "what a credit reads: one line");
  struct Gpu {
    bool computing = false;
    Ring<std::uint32_t> ready;  // tasks ready to compute, in the order they became ready
    Time busy = 0;              // time spent computing
    Time comm_wait = 0;         // time idle until a coflow made its next task ready
    Time idle_since = 0;
  };

  /// The route of a cell head seen ahead, when it is a pure function of the
  /// flow (Router::peek_switch_link), remembered for the later stage and the
  /// handler: a switch's ECMP choice is then computed once per cell-hop. Keyed
  /// by the event's tiebreak, unique to it, so a miss only means recomputing.
  struct RouteMemo {
    std::uint64_t tiebreak = 0;
    Time time = -1;  // no event has a negative time: empty
    topo::LinkId out = topo::kNoLink;
  };
  static constexpr std::size_t kRouteMemos = 64;  // more than the prefetch distance
  static std::size_t memo_slot(const core::Event& ev) {
    return static_cast<std::size_t>((ev.tiebreak * 0x9E3779B97F4A7C15ULL) >> 58);
  }
  topo::LinkId route_ahead(const core::Event& ev, std::uint32_t flow) const {
    const topo::LinkId out = router_.peek_switch_link(ev.target, flow, ev.time);
    if (out != topo::kNoLink) route_memo_[memo_slot(ev)] = {ev.tiebreak, ev.time, out};
    return out;
  }
  topo::LinkId remembered_route(const core::Event& ev) const {
    const RouteMemo& m = route_memo_[memo_slot(ev)];
    return m.tiebreak == ev.tiebreak && m.time == ev.time ? m.out : topo::kNoLink;
  }

  /// The most bytes one link can add to one /link_util bin, at `fastest`.
  static std::uint64_t link_util_bin_bytes(BitsPerSecond fastest, const NetworkOptions& options);
  /// The /link_util row limit: past it the bins widen.
  static std::uint64_t link_util_rows(const topo::Fabric& fabric, const NetworkOptions& options);

  void try_send(topo::NodeId node, topo::LinkId link, core::Simulator& sim);
  bool send_own(topo::NodeId node, topo::LinkId link, core::Simulator& sim);
  /// send_own() for a port that may burst: as many cells as one event per cell
  /// would send before anything could change the port's choice.
  bool send_own_burst(topo::NodeId node, topo::LinkId link, core::Simulator& sim);
  /// A flow joins its NIC port's own flows (behind a burst's cells, where one is on the wire).
  void push_own(topo::LinkId link, std::uint32_t key, std::uint32_t flow,
                const core::Simulator& sim);
  /// The numbers of a GPU port's transmission `n` (0-based): the one place
  /// the numbering is defined.
  Numbers numbers_of(topo::LinkId link, std::uint64_t n) const {
    return {links_[link].stream, kSlots * n};
  }
  /// The numbers of the next transmission on `link` (the node's own where not at a GPU).
  [[gnu::always_inline]] Numbers take_numbers(topo::LinkId link) {
    if (links_[link].stream == 0) return {};
    return numbers_of(link, own_[link].sent++);
  }
  /// An event of a transmission numbered `numbers`, in `slot`.
  [[gnu::always_inline]] static void send_as(core::Simulator& sim, Numbers numbers, Slot slot,
                                             topo::NodeId target, Time delay, std::uint32_t tag,
                                             std::uint64_t payload) {
    sim.send_maybe_from(numbers.stream, numbers.first + slot, target, delay, tag, payload);
  }
  bool send_queued(topo::NodeId node, topo::LinkId link, int cls, core::Simulator& sim);
  /// Relayed or switched cells, classes in strict priority.
  bool send_any_queued(topo::NodeId node, topo::LinkId link, core::Simulator& sim);
  void enqueue(topo::LinkId out, int cls, const Cell& cell);
  /// The port sends `bytes` in class `cls` from `start` for `serialize`: busy,
  /// counted, its credit spent.
  void occupy(topo::LinkId link, int cls, Bytes bytes, Time start, Time serialize);
  /// A burst's cell of `flow` starting at `at` (a NIC's own: no credit
  /// upstream, never delivered on send); returns when it has left.
  Time start_own_cell(topo::LinkId link, int cls, std::uint32_t flow, Bytes bytes, Time at,
                      Numbers numbers, core::Simulator& sim);
  static std::uint64_t cell_payload(std::uint32_t flow, bool slow, bool last, int cls, Bytes bytes,
                                    std::uint32_t hop) {
    return CellHead{flow, bytes, cls, hop, slow, last}.pack();
  }
  static PortQueues make_queues(const topo::Fabric& fabric, const work::Dag& dag,
                                const NetworkOptions& options, const Perturbations& perturbations);
  /// Numbers each GPU port's events and picks the ports that may burst.
  void number_gpu_ports(const NetworkOptions& options);
  void transmit(topo::NodeId node, topo::LinkId link, int cls, const Cell& cell,
                core::Simulator& sim);
  /// Credit back at `link`'s port, checked against its buffer.
  void add_credit(topo::LinkId link, int cls, Bytes bytes);
  /// A cell left this node's ingress buffer from `in_link`: its credit reaches
  /// the upstream port after `delay`, by an event or, where that cannot change
  /// the port's choices, at once.
  void return_credit(topo::LinkId in_link, int cls, Bytes bytes, Time delay, core::Simulator& sim,
                     Numbers numbers);
  void on_cell_head(const core::Event& ev, core::Simulator& sim);
  /// A cell sent on a link that delivers (LinkState::delivers), its head at
  /// the receiver before the end time: when the link ends at the cell's
  /// receiver, its bytes are counted here. It then needs no event there (true)
  /// unless it is the flow's last cell (`last` set: the receiver ends the flow
  /// in an event of its own) or its credit cannot be added early (the receiver
  /// returns it). What the event did otherwise (the count, a credit added
  /// early) leaves no trace in the order of other events, so the run is the same.
  bool delivered(topo::LinkId link, int cls, std::uint32_t flow, Bytes bytes, Time tail, bool slow,
                 bool& last, core::Simulator& sim);
  /// Adds a credit arriving over `in_link` at `arrival` at once where its
  /// event could not change what the port does from `from` on (a time at or
  /// before the port's next event; NetworkOptions::early_credits); false: it
  /// must be an event.
  bool credit_early(topo::LinkId in_link, int cls, Bytes bytes, Time arrival, Time from,
                    core::Simulator& sim);
  /// Adds a cell's bytes to its flow's count (conservation: never past the
  /// flow's bytes); true when that completes the flow.
  bool count_received(std::uint32_t flow, Bytes bytes, const work::Flow& f);
  /// The node whose rank counts flow f's received bytes: where its last link starts
  /// when that link delivers (LinkState::delivers), else its receiver.
  topo::NodeId counted_at(std::uint32_t f) const;
  /// Starts what became ready; `by_comm` when a coflow completion made it so.
  void act(work::DagRunner::Ready& ready, core::Simulator& sim, bool by_comm);
  void start_group(std::uint32_t group, core::Simulator& sim);
  void start_compute(work::GpuId gpu, core::Simulator& sim);
  /// The port failed: its queued cells and own flows move to other ports of `node`.
  void evacuate(topo::NodeId node, topo::LinkId link, core::Simulator& sim);
  /// The full invariants over this rank's ports (NetworkOptions::check).
  void check_ports() const;
  [[noreturn]] void violated(const std::string& what) const;
  topo::NodeId gpu_node(work::GpuId g) const { return fabric_.gpu_node(g); }
  work::GpuId gpu_of(topo::NodeId n) const { return fabric_.node(n).index; }

  const topo::Fabric& fabric_;
  const work::Dag& dag_;
  core::Simulator& sim_;
  NetworkOptions options_;
  work::DagRunner runner_;
  // By link, the cells queued at its port: what adaptive spraying reads. Kept
  // only then (elsewhere it was a cache miss per cell for nothing).
  bool count_queued_;
  std::vector<std::int32_t> queued_cells_;
  Router router_;
  work::DagRunner::Ready ready_;  // reused: no allocation per event
  std::vector<std::uint32_t> acting_tasks_, acting_groups_;
  mutable std::array<RouteMemo, kRouteMemos> route_memo_{};  // a cache, not state
  std::vector<Port> ports_;    // by link (used where this rank owns the link's source)
  PortQueues queues_;          // the cells waiting at ports_
  std::vector<OwnFlows> own_;  // by link: at a GPU, its flows with bytes to send, by key
  std::vector<Burst> bursts_;  // by LinkState::burst
  std::vector<std::uint32_t> gpu_min_key_;  // by GPU: the lowest key of the flows it sends
  std::vector<Gpu> gpus_;                   // by GPU
  /// What a cell-hop reads about a link, in one cache line: before, the
  /// fabric's Link, two perturbation arrays, the credit pace and the owner map
  /// were five misses per link (docs/performance.md, sixth measurement).
  struct alignas(64) LinkState {
    topo::NodeId from = 0;
    topo::NodeId to = 0;
    Time latency = 0;
    Time perturbed_at = kTimeInfinity;  // slower or longer for cells starting from then
    Time extra_latency = 0;             // ... added to its latency then
    Time cell_time = 0;                 // a full cell's serialization before perturbed_at
    Time perturbed_cell_time = 0;       // ... and from then on
    double credit_pace = 0;             // the most bytes per ps its port can send
    bool source_here = false;           // this rank owns `from`
    // Into a GPU, from its NVSwitch or from the one switch it hangs off: a cell
    // sent here for that GPU is counted when it is sent (Network::delivered).
    bool delivers = false;
    std::uint8_t stream = 0;         // from a GPU: the stream its events are numbered in
    std::uint32_t burst = kNoBurst;  // a NIC port that may burst (send_own_burst): its bursts_
  };
  static_assert(sizeof(LinkState) == 64);
  bool perturbed(topo::LinkId l, Time t) const { return t >= links_[l].perturbed_at; }
  BitsPerSecond rate(topo::LinkId l, bool perturbed) const {
    return perturbed ? link_rate_[l] : fabric_.link(l).rate;
  }
  /// A cell's serialization time on `l`; a full cell's is kept per link.
  Time serialization(topo::LinkId l, Bytes bytes, bool perturbed) const {
    if (bytes == options_.cell_size) {
      return perturbed ? links_[l].perturbed_cell_time : links_[l].cell_time;
    }
    return transmit_time(bytes, rate(l, perturbed));
  }
  Time latency(topo::LinkId l, bool perturbed) const {
    return links_[l].latency + (perturbed ? links_[l].extra_latency : 0);
  }
  std::vector<LinkState> links_;          // by link
  std::vector<BitsPerSecond> link_rate_;  // by link: its rate once perturbed (cells not full)
  std::vector<Time> gpu_at_;
  std::vector<double> gpu_slowdown_;
  std::vector<std::uint8_t> flow_class_;  // by flow: switch class
  std::vector<std::uint32_t> flow_key_;   // by flow: NIC key (0: promoted by the starvation guard)
  std::vector<Time> last_served_;         // by flow: when its NIC last sent a cell of it (guard on)
  std::vector<Bytes> to_send_;            // by flow: bytes not yet cut into cells (at the sender)
  std::vector<Bytes> received_;           // by flow: bytes arrived (on counted_at(flow)'s rank)
  // By GPU: the switch it hangs off when it has only one and its link delivers,
  // else its own node (counted_at).
  std::vector<topo::NodeId> inbound_;
  std::vector<Time> flow_start_, flow_end_, task_start_, task_end_;
  std::int64_t cell_hops_ = 0;    // cells into this rank's nodes (or delivered from them on send)
  std::uint32_t iterations_ = 1;  // iteration labels of the tasks: 0..iterations_-1
  std::vector<Time> gpu_iteration_wait_;  // by GPU * iterations_ + iteration
  // Output rows and counters (NetworkOptions::record).
  std::function<void(const core::Simulator&)> sync_hook_;
  std::function<void()> batch_hook_;
  bool initializing_ = false;  // initialize() runs act(): sends come from each GPU
  std::vector<FlowRecord> flow_records_;
  std::vector<ComputeRecord> compute_records_;
  std::vector<std::uint32_t> flow_coflow_;  // by flow
  std::vector<std::uint8_t> flow_recorded_, task_recorded_;
  /// One link's bytes by class, one cache line (its busy time is in its Port).
  struct alignas(64) LinkTally {
    std::array<std::uint64_t, kClasses> bytes{};
  };
  static_assert(sizeof(LinkTally) == 64);
  /// What delivering a cell of `flow` reads (delivered()).
  void prefetch_delivery(std::uint32_t flow) const {
    core::prefetch(&dag_.flows()[flow]);
    core::prefetch(&received_[flow]);
  }
  /// What returning a credit over `link` reads: its port's first line and its link state.
  void prefetch_credit_return(topo::LinkId link) const {
    core::prefetch(&ports_[link]);
    core::prefetch(&links_[link]);
  }
  std::vector<LinkTally> tallies_;        // by link, with record
  std::vector<std::uint64_t> busy_time_;  // by link, with record: time spent serializing
  LinkBins bins_;                         // with record, link_util_bin > 0 and link_util_top > 0
  bool binning_ = false;
  /// What sending a cell on `link` reads: both lines of its port, its link
  /// state and, when recording, its counters.
  void prefetch_sender(topo::LinkId link) const {
    const char* port = reinterpret_cast<const char*>(&ports_[link]);
    core::prefetch(port);
    core::prefetch(port + 64);
    core::prefetch(&links_[link]);
    if (!tallies_.empty()) {
      core::prefetch(&tallies_[link]);
      core::prefetch(&busy_time_[link]);
    }
  }
};

}  // namespace shoal::net
