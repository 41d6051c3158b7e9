// The packet network run on one rank, as the unit tests drive it.
#pragma once

#include <cstdint>
#include <utility>

#include "shoal/core/comm.hpp"
#include "shoal/core/simulator.hpp"
#include "shoal/net/network.hpp"
#include "shoal/sched/policy.hpp"
#include "shoal/topo/fabric_config.hpp"

namespace shoal::test {

struct OneRankRun {
  net::RunResults results;
  std::int64_t events = 0;
};

/// Runs `dag` on `fabric` to the end on one rank; with `check_end_state`, the
/// ports must then be empty with all their credit back (Network::check_end_state).
inline OneRankRun run_one_rank(const topo::Fabric& fabric, const work::Dag& dag,
                               const net::NetworkOptions& options,
                               const net::Perturbations& perturbations = {},
                               sched::FlowPriorities priorities = {},
                               bool check_end_state = false) {
  const core::Comm comm = core::Comm::self();
  const core::Partition partition = topo::partition_fabric(fabric, 1, "block");
  core::EngineOptions engine;
  engine.progress = false;
  core::Simulator sim(comm, fabric.layout(), partition, engine);
  net::Network network(fabric, dag, sim, options, perturbations, std::move(priorities));
  network.initialize();
  sim.run(network);
  if (check_end_state) network.check_end_state();
  return {network.results(comm), sim.local_events()};
}

}  // namespace shoal::test
