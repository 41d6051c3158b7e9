#include "shoal/core/comm_costs.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "shoal/core/error.hpp"
#include "shoal/core/layout.hpp"
#include "shoal/core/partition.hpp"
#include "shoal/core/simulator.hpp"

namespace shoal::core {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Seconds per repetition of `body` (called `reps` times), on every rank
/// after a barrier; the slowest rank's, as all wait for it.
template <class Body>
double time_per(MPI_Comm comm, int reps, Body body) {
  MPI_Barrier(comm);
  const double start = MPI_Wtime();
  for (int i = 0; i < reps; ++i) body();
  double mine = (MPI_Wtime() - start) / reps, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return slowest;
}

/// The engine's costs: one entity per rank, each with `streams` events in
/// flight; each event sends the next of its stream one lookahead on, to the
/// next rank's entity (`remote`) or to its own. Every window then holds
/// `streams` events per rank, and as many sent to and received from others.
struct Relay {
  bool remote = false;
  int ranks = 1;
  void handle(const Event& ev, Simulator& sim) {
    if (ev.payload == 0) return;
    const EntityId self = sim.current();
    const EntityId next = remote ? (self + 1) % static_cast<EntityId>(ranks) : self;
    sim.send(next, kRelayLatency, 0, ev.payload - 1);
  }
  static constexpr Time kRelayLatency = 1000;
};

/// Seconds per window of a relay run of `windows` windows, the slowest rank's.
double relay_seconds(const Comm& comm, bool remote, int streams, std::uint64_t windows) {
  const int ranks = comm.size();
  Layout layout("relay ranks=" + std::to_string(ranks),
                std::vector<EntityId>(static_cast<std::size_t>(ranks), 1),
                std::vector<std::string>(static_cast<std::size_t>(ranks), "relay"));
  for (AtomId a = 0; a < static_cast<AtomId>(ranks); ++a) {
    layout.add_link(a, (a + 1) % static_cast<AtomId>(ranks), Relay::kRelayLatency);
  }
  const Partition partition = Partition::from_strategy(layout, ranks, Strategy::kRoundRobin);
  EngineOptions options;
  options.progress = false;
  Simulator sim(comm, layout, partition, options);
  const auto self = static_cast<EntityId>(comm.rank());
  for (int s = 0; s < streams; ++s) sim.schedule_initial(self, self, 0, 0, windows);
  Relay relay{remote, ranks};
  const RunSummary summary = sim.run(relay);
  return summary.wall_seconds / static_cast<double>(std::max<std::int64_t>(summary.windows, 1));
}

}  // namespace

MeasuredCosts measure_comm_costs(const Comm& comm, int rounds) {
  if (comm.size() < 2) throw Error("measuring MPI costs needs at least two ranks (mpirun -np 2)");
  MPI_Comm c;
  std::memcpy(&c, comm.native(), sizeof c);
  const int rank = comm.rank();
  const bool pair = rank < 2;
  const int peer = 1 - rank;
  constexpr int kTag = 23;
  std::vector<double> latency, bandwidth, overhead, allreduce;
  std::vector<char> small(sizeof(Event)), big(1 << 20);
  std::vector<MPI_Request> requests(64);
  for (int round = 0; round < rounds; ++round) {
    // Ping-pong of one event's bytes.
    constexpr int kPings = 2000;
    latency.push_back(time_per(c, kPings,
                               [&] {
                                 if (!pair) return;
                                 if (rank == 0) {
                                   MPI_Send(small.data(), static_cast<int>(small.size()), MPI_BYTE,
                                            peer, kTag, c);
                                   MPI_Recv(small.data(), static_cast<int>(small.size()), MPI_BYTE,
                                            peer, kTag, c, MPI_STATUS_IGNORE);
                                 } else {
                                   MPI_Recv(small.data(), static_cast<int>(small.size()), MPI_BYTE,
                                            peer, kTag, c, MPI_STATUS_IGNORE);
                                   MPI_Send(small.data(), static_cast<int>(small.size()), MPI_BYTE,
                                            peer, kTag, c);
                                 }
                               }) /
                      2);
    // A stream of messages in flight, acknowledged per burst: per message, then per byte.
    auto stream = [&](std::vector<char>& buffer, int burst) {
      if (!pair) return;
      const int bytes = static_cast<int>(buffer.size());
      for (int i = 0; i < burst; ++i) {
        if (rank == 0) {
          MPI_Isend(buffer.data(), bytes, MPI_BYTE, peer, kTag, c, &requests[i]);
        } else {
          MPI_Irecv(buffer.data(), bytes, MPI_BYTE, peer, kTag, c, &requests[i]);
        }
      }
      MPI_Waitall(burst, requests.data(), MPI_STATUSES_IGNORE);
      char ack = 0;
      if (rank == 0) {
        MPI_Recv(&ack, 1, MPI_BYTE, peer, kTag + 1, c, MPI_STATUS_IGNORE);
      } else {
        MPI_Send(&ack, 1, MPI_BYTE, peer, kTag + 1, c);
      }
    };
    overhead.push_back(time_per(c, 100, [&] { stream(small, 64); }) / 64);
    bandwidth.push_back(static_cast<double>(big.size()) * 16 /
                        time_per(c, 20, [&] { stream(big, 16); }));
    // The engine's own reduction, with no batches to count.
    const std::vector<std::int64_t> none(static_cast<std::size_t>(comm.size()), 0);
    std::int64_t to_here = 0;
    allreduce.push_back(time_per(c, 5000, [&] {
      comm.reduce_window({0, 0, 0, 0, 0}, none, to_here);
    }));
  }
  // The engine around them: windows of one event per rank and of many,
  // local and sent on; the differences price a window and a crossing event.
  constexpr int kStreams = 64;
  constexpr std::uint64_t kWindows = 20000;
  std::vector<double> window, crossing;
  for (int round = 0; round < rounds; ++round) {
    const double local_one = relay_seconds(comm, false, 1, kWindows);
    const double local_many = relay_seconds(comm, false, kStreams, kWindows);
    const double remote_one = relay_seconds(comm, true, 1, kWindows);
    const double remote_many = relay_seconds(comm, true, kStreams, kWindows);
    const double per_event = (local_many - local_one) / (kStreams - 1);
    window.push_back(local_one - per_event);
    // Each rank sends and receives kStreams - 1 more events per window.
    crossing.push_back(((remote_many - remote_one) - (local_many - local_one)) /
                       (2.0 * (kStreams - 1)));
  }
  MeasuredCosts m;
  m.ranks = comm.size();
  m.latency = median(latency);
  m.bandwidth = median(bandwidth);
  m.message_overhead = median(overhead);
  m.allreduce = median(allreduce);
  m.window_overhead = std::max(0.0, median(window) - m.allreduce);
  m.remote_event =
      std::max(0.0, median(crossing) - static_cast<double>(sizeof(Event)) / m.bandwidth);
  return m;
}

}  // namespace shoal::core
