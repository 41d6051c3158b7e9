#include "run_config.hpp"

#include "memory_guard.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>

#include "shoal/cli/guard.hpp"
#include "shoal/config/config_file.hpp"
#include "shoal/core/error.hpp"
#include "shoal/core/free_heap.hpp"
#include "shoal/exec/fragment.hpp"
#include "shoal/exec/pilot.hpp"
#include "shoal/net/network_config.hpp"
#include "shoal/output/output_config.hpp"
#include "shoal/sched/policy_config.hpp"
#include "shoal/topo/fabric_config.hpp"
#include "shoal/topo/load_partition.hpp"
#include "shoal/work/workload_config.hpp"

namespace shoal::cli {

using core::release_free_heap;

exec::PilotLoad weighted_pilot(const core::Comm& comm, const exec::RunSetup& setup) {
  const auto start = std::chrono::steady_clock::now();
  exec::PilotLoad pilot =
      exec::pilot_load(comm, *setup.fabric, setup.dag, setup.network, setup.perturbations,
                       setup.engine.seed, kPilotSlices, setup.engine.end_time);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (comm.rank() == 0) {
    spdlog::info(
        "weighted partition: a pilot on the instant network with latency, {} events over {} on "
        "{} rank{}, in {:.2f} s ({} windows in {:.2f} s)",
        pilot.events, format_time(pilot.span), comm.size(), comm.size() == 1 ? "" : "s", seconds,
        pilot.windows, pilot.loop_seconds);
  }
  return pilot;
}

bool place_weighted(const core::Comm& comm, exec::RunSetup& setup, int ranks, bool* pilot_kept) {
  if (setup.partition) return true;
  if (!setup_everywhere(comm, [&] { check_pilot_memory(comm.rank(), comm.size(), setup); })) {
    return false;
  }
  exec::PilotLoad pilot;
  if (run_or_abort(comm, [&] {
        pilot = weighted_pilot(comm, setup);
        return 0;
      }) != 0) {
    return false;
  }
  const bool placed = setup_everywhere(comm, [&] {
    try {
      setup.partition.emplace(topo::partition_by_load(*setup.fabric, ranks, pilot.load));
      if (pilot_kept != nullptr) {
        *pilot_kept = ranks == comm.size() &&
                      setup.partition->places_as(exec::pilot_partition(*setup.fabric, ranks));
        if (*pilot_kept && comm.rank() == 0) {
          spdlog::info(
              "weighted partition: its units dealt in turn, as the pilot ran, balance as well as "
              "placed by load; the run keeps the pilot's fragments");
        }
      }
    } catch (const Error& e) {
      throw Error("config " + setup.config_path + ": run.partition: " + e.what());
    }
  });
  pilot = {};
  release_free_heap();
  return placed;
}

void require_one_policy(const RunSetup& setup, const std::string& what) {
  if (setup.policies.size() > 1) {
    throw Error((what.empty() ? std::string() : what + ": ") +
                "runs one policy; sweep policy.name instead of giving policy.compare");
  }
}

void read_config_guarded(const std::string& path, const std::vector<std::string>& overrides,
                         int ranks_on_node, RunSetup& setup) {
  setup.dag.set_growth_check(dag_growth_guard(ranks_on_node, setup));
  read_config(path, overrides, 1, setup);
  setup.dag.set_growth_check({});
}

void read_config(const std::string& path, const std::vector<std::string>& overrides, int ranks,
                 RunSetup& setup, const std::map<std::string, std::string>& input_map,
                 const std::string& shown_as) {
  config::ConfigFile config(path, overrides, shown_as);
  config.map_inputs(input_map);
  setup.config_path = config.path();
  setup.fabric.emplace(topo::build_fabric(config));
  const topo::Fabric& fabric = *setup.fabric;
  // Before the workload: the resource guard watches the DAG grow against it.
  setup.memory_limit = exec::read_memory_limit(config);
  setup.network = net::read_network_options(config);
  // Before the workload too: a rank of several builds only its fragment of
  // the flows, under the partition or, while a weighted one waits for its
  // pilot, under the pilot's.
  const std::string partition = exec::read_run_table(config, fabric, setup.network, setup.engine);
  const std::string partition_file =
      topo::is_partition_strategy(partition) ? partition : config.input("partition", partition);
  setup.partition_spec = partition_file;
  if (setup.network.instant && ranks > 1) {
    throw Error("config " + config.path() + ": network.model = \"instant\" runs on one rank, not " +
                std::to_string(ranks) + " (its flows arrive the moment they start)");
  }
  if (!setup.partition) {  // else the weighted partition its pilot made
    try {
      if (partition == "weighted" && ranks == 1) {  // nothing to balance: no pilot
        setup.partition.emplace(topo::partition_by_load(
            fabric, 1, {1, std::vector<std::uint64_t>(fabric.gpu_count())}));
      } else if (partition != "weighted") {
        setup.partition.emplace(topo::fabric_partition(fabric, ranks, partition, partition_file));
      }
    } catch (const Error& e) {
      throw Error("config " + config.path() + ": run.partition: " + e.what());
    }
  }
  if (setup.fragment_rank >= 0 && ranks > 1) {
    const core::Partition cut =
        setup.partition ? *setup.partition : exec::pilot_partition(fabric, ranks);
    setup.dag.set_fragment(exec::rank_fragment(fabric, setup.network, cut, setup.fragment_rank));
  }
  // Processor time: the build's own, also where ranks share a core.
  const std::clock_t build_start = std::clock();
  work::Workload workload =
      work::read_workload(config, fabric.gpu_count(), fabric.gpus_per_server(), setup.dag);
  const double build_seconds = static_cast<double>(std::clock() - build_start) / CLOCKS_PER_SEC;
  release_free_heap();
  if (setup.dag.whole()) {
    spdlog::debug("built the workload in {:.2f} s of processor time: {} flows, {} coflows",
                  build_seconds, setup.dag.flow_count(), setup.dag.coflows().size());
  } else {
    spdlog::debug(
        "rank {} built its fragment in {:.2f} s of processor time: it holds {} of the DAG's {} "
        "flows, and it counted, without making them, the flows of {} of the {} coflows",
        setup.fragment_rank, build_seconds, setup.dag.held_count(), setup.dag.flow_count(),
        setup.dag.counted_coflows(), setup.dag.coflows().size());
  }
  setup.workload = std::move(workload.name);
  setup.jobs = std::move(workload.jobs);
  setup.perturbations = exec::read_perturbations(config, fabric);
  setup.policies = sched::read_policies(config);
  // The starvation guard acts at NICs: the network's option, a policy's key.
  setup.network.starvation_after = setup.policies.front().starvation_after;
  setup.milestones = exec::read_milestones(config, setup.dag);
  output::read_output_table(config, setup);
  config.reject_unknown();
  setup.config_text = config.text();
  setup.config_resolved = config.resolved_text();
  // Once every file was found and read: what /meta keeps of them.
  setup.inputs = config::snapshot_inputs(config.inputs(), setup.embed_limit);
}

}  // namespace shoal::cli
