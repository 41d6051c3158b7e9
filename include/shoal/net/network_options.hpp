// What a run sets about the packet network ([network] in the config,
// net/network_config.hpp), the links it perturbs, and the priorities it
// enforces for each flow.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shoal/core/units.hpp"
#include "shoal/net/router.hpp"
#include "shoal/topo/ids.hpp"
#include "shoal/work/dag.hpp"

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

#ifdef NDEBUG
inline constexpr bool kFullChecksByDefault = false;
#else
inline constexpr bool kFullChecksByDefault = true;
#endif

struct NetworkOptions {
  // Every flow arrives the moment it starts and is acknowledged at once: the
  // infinitely fast network against which a schedule's closed forms hold
  // ([network] model = "instant"). Its deliveries cross no lookahead, so it
  // runs on one rank, in time order.
  bool instant = false;
  // With `instant`: a flow arrives its path's latency after it starts, and its
  // acknowledgement as long after that (still no bandwidth, no queues). Every
  // delivery to another rank then crosses a cut link's latency, the
  // lookahead, so the run can be cut across ranks: the weighted partition's
  // pilot runs so on every rank of the run, each holding its own GPUs' part.
  bool instant_latency = false;
  Bytes cell_size = 4096;
  Bytes buffer_per_class = 512 * 1024;  // ingress buffer per port and class (credits)
  bool cut_through = true;
  LoadBalancing load_balancing = LoadBalancing::kEcmp;
  Time starvation_after = kTimeInfinity;  // a flow its NIC has not served that long goes first
  bool record = false;                    // keep per-link counters for the output file
  Time link_util_bin = 0;            // with record: bytes per link per bin of this width (0: off)
  std::uint32_t link_util_top = 20;  // ... reported for this many of the busiest links
  // ... kept in at most this many bytes over all ranks (4 per link and bin);
  // past it every bin widens to twice its width.
  std::uint64_t link_util_memory = std::uint64_t{1} << 30;
  // ... in a scratch file in this folder once the run has passed them, read
  // back for the busiest links at the end (empty: all kept in memory).
  std::string link_util_scratch;
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
  // link's latency (Nic::kMaxBurst at most), their events keyed as those would
  // have been (a GPU's port keys its events itself). The run is the same
  // either way; off only to test that.
  bool nic_bursts = true;
  // Where routes are fixed (ECMP, no link that fails, no starvation guard), a
  // flow's lane at a port is found by (flow, hop) in a table rather than by a
  // hash of (link, class, flow) (PortQueues::by_hop). The run is the same
  // either way; off only to test that.
  bool lanes_by_hop = true;
  // The by-hop table is sized for every flow of the DAG on every rank, however
  // few of them wait at the rank's ports, while the hash follows the cells
  // waiting there. Above this many bytes it gives way to the hash: on large
  // DAGs, whose table misses the caches anyway, it saves little time and takes
  // much of each rank's memory (docs/performance.md, "Memory per rank").
  std::uint64_t lanes_by_hop_max_bytes = std::uint64_t{128} << 20;
  // The full invariants (docs/reliability.md): after every window, every
  // port's queue counters and credits recounted, its lanes found again by
  // their keys. On in Debug builds, `shoal run --check` in Release. The cheap
  // ones (credit bounds, conservation, each flow and task ending once, the end
  // state) are always on.
  bool check = kFullChecksByDefault;
};

/// Throws an Error naming the bad option (cell size, buffer smaller than a cell).
void validate(const NetworkOptions& options);

/// What the network enforces for each flow: the key its NIC orders it by
/// (lowest first, round-robin among equal keys) and its class at switches
/// (8 classes in strict priority). A policy decides them per coflow: every
/// flow of coflow c gets key[c] and cls[c]; empty: every flow key 0, class 0
/// (fair sharing).
struct FlowPriorities {
  std::vector<std::uint32_t> key;  // by coflow: its flows' NIC key
  std::vector<std::uint8_t> cls;   // by coflow: its flows' switch class
  // The Nic checks both against the DAG's coflows.
};

}  // namespace shoal::net
