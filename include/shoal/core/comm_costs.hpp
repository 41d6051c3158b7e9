// What MPI costs on this machine, measured as `shoal scale` prices it
// (core/scaling_model.hpp): `shoal mpi-costs` under mpirun writes them.
#pragma once

#include "shoal/core/comm.hpp"

namespace shoal::core {

struct MeasuredCosts {
  int ranks = 1;
  double latency = 0;           // one-way, a 32-byte message: half a ping-pong, s
  double bandwidth = 0;         // 1 MiB messages, 16 in flight, bytes/s
  double message_overhead = 0;  // 32-byte messages streamed to one rank: s each
  double allreduce = 0;         // one window's reduction (Comm::reduce_window), s
  // The engine's own work around them, from runs of the engine (Simulator) itself:
  double window_overhead = 0;  // per window, beyond its reduction and its events, s
  double remote_event = 0;     // per event a rank sends or receives, beyond its bytes, s
};

/// Collective: times each cost as the median of `rounds` rounds; the
/// point-to-point ones between ranks 0 and 1, the reduction over all ranks.
/// Needs at least two ranks.
MeasuredCosts measure_comm_costs(const Comm& comm, int rounds);

}  // namespace shoal::core
