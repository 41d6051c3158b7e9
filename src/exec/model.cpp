#include "shoal/exec/model.hpp"

#include <algorithm>
#include <string>

#include "shoal/core/error.hpp"
#include "shoal/exec/outcomes.hpp"

namespace shoal::exec {

Model::Model(const topo::Fabric& fabric, const work::Dag& dag, core::Simulator& sim,
             const net::NetworkOptions& options, const Perturbations& perturbations,
             net::FlowPriorities priorities, const RecorderOptions& recording)
    : sim_(sim),
      check_(options.check),
      recorder_(fabric, dag, sim, recording),
      executor_(fabric, dag, sim, perturbations.gpus, recorder_),
      network_(fabric, dag, sim, options, perturbations.links, std::move(priorities), *this) {}

Model::EstimatedBytes Model::estimate_bytes(const topo::Fabric& fabric, const work::Dag& dag,
                                            const net::NetworkOptions& options,
                                            const RecorderOptions& recording,
                                            const net::RankShare& share) {
  return {net::Network::estimate_bytes(fabric, dag, options, share),
          Executor::estimate_bytes(fabric, dag, share.flows_sent),
          Recorder::estimate_bytes(fabric, dag, recording, share.flows_sent)};
}

void Model::initialize() {
  network_.initialize();
  executor_.initialize(sim_, network_);
}

void Model::check_outcome(const work::Dag& dag, const RunResults& r, Time end_time,
                          Time simulated) {
  const bool complete = unfinished_flows(r) == 0;
  if (end_time == kTimeInfinity && !complete) {
    // Times add saturating at kTimeInfinity: a run this late has run out of
    // clock, not of things to do.
    if (simulated >= kTimeInfinity / 2) {
      throw Error("the run reached simulated time " + format_time(simulated) +
                  " with flows unfinished: times past 2^63 ps (about 106 days) cannot be "
                  "represented; the links are too slow (topology.link_rate) or the workload too "
                  "large for one run");
    }
    throw Error("the run ended with flows unfinished and no end time: a deadlock");
  }
  // Flows and tasks end at most once (checked as they end); without an end
  // time every task must have ended.
  if (end_time == kTimeInfinity && r.first_unfinished_task >= 0) {
    throw Error("invariant violated: task " + std::to_string(r.first_unfinished_task) +
                " never ran, yet every flow finished and no end time was set");
  }
  if (complete && r.bytes_delivered != dag.total_bytes()) {
    throw Error("conservation: delivered " + std::to_string(r.bytes_delivered) + " bytes of " +
                std::to_string(dag.total_bytes()));
  }
}

}  // namespace shoal::exec
